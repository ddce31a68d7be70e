// Kit's only script: a select marked data-autosubmit submits its form when changed
// (the account switcher). Served from Kit itself, so the Content-Security-Policy can
// forbid every inline script.
document.addEventListener("change", function (event) {
  var target = event.target;
  if (target.matches && target.matches("select[data-autosubmit]") && target.form) {
    target.form.submit();
  }
});
