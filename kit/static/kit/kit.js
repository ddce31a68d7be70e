// Kit's own script, served from Kit itself so the Content-Security-Policy can forbid every
// inline script: a select marked data-autosubmit submits its form when changed (the account
// switcher), and "/" anywhere but in a field moves to the header's search box.
document.addEventListener("change", function (event) {
  var target = event.target;
  if (target.matches && target.matches("select[data-autosubmit]") && target.form) {
    target.form.submit();
  }
});

document.addEventListener("keydown", function (event) {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
  var active = document.activeElement;
  if (active && (active.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName))) return;
  var box = document.querySelector("[data-search-shortcut]");
  if (box) {
    event.preventDefault();
    box.focus();
    box.select();
  }
});
