"""The pages people use every day, in Chromium against a live Kit, with the
Content-Security-Policy on: search from the header and open a hit; edit a nested list of
the ICP through the form and see the new version in the history; a second editor meets a
version conflict and sees it; the activity page after an agent's save. Screenshots go to
artifacts/ (three are copied into docs/ for the README)."""

import httpx2
import pytest
from django.contrib.auth.hashers import make_password
from django.core.management import call_command
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from outreach.access import Actor
from outreach.models import Member
from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from tests.browser.chrome import PASSWORD, click_and_load, csp_violations, shot, sign_in
from tests.helpers import token

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(live_kit):
    call_command("seed_demo", "--allow-insecure-demo", verbosity=0)
    call_command("seed_demo_research", verbosity=0)
    call_command("seed_demo_business_memory", verbosity=0)
    owner = Member.objects.select_related("user", "account").get(
        account__slug="demo", user__username="demo@kit.test"
    )
    owner.user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    owner.user.save()
    return owner


def test_search_from_the_header_and_open_a_hit(live_kit, chromium, demo):
    driver, base = chromium, live_kit.url
    sign_in(driver, base, "demo@kit.test")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("/")  # the shortcut moves to the header's search box
    box = driver.switch_to.active_element
    assert box.get_attribute("id") == "header-search"
    box.send_keys("who is hiring account executives")
    old = driver.find_element(By.TAG_NAME, "html")
    box.send_keys(Keys.ENTER)
    WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "html") != old)
    assert "Search memory" in driver.find_element(By.TAG_NAME, "h1").text
    companies = driver.find_elements(By.CSS_SELECTOR, "article.company-hit")
    assert companies, driver.page_source[:2000]
    shot(driver, "search")
    first = companies[0]
    domain = first.get_attribute("data-domain")
    click_and_load(driver, first.find_element(By.CSS_SELECTOR, "ul.hits a"))
    assert domain in driver.current_url
    assert driver.find_elements(By.CSS_SELECTOR, "article.note")
    assert csp_violations(driver) == []


def test_edit_a_nested_list_of_the_icp_through_the_form(live_kit, chromium, demo):
    driver, base = chromium, live_kit.url
    sign_in(driver, base, "demo@kit.test")
    driver.get(f"{base}/business-memory/account/icp_definition/edit/")
    industry = driver.find_element(By.CSS_SELECTOR, '[data-path="value.industry"]')
    assert not driver.find_element(By.ID, "id_value").is_displayed()  # the form shows instead
    industry.find_element(By.CSS_SELECTOR, "[data-add-item]").click()
    added = industry.find_elements(By.CSS_SELECTOR, "li.ve-item")[-1]
    added.find_element(By.CSS_SELECTOR, "[data-input]").send_keys("Fintech")
    added.find_element(By.CSS_SELECTOR, "[data-up]").click()  # reorder: Fintech second
    headcount = driver.find_element(By.CSS_SELECTOR, '[data-path="value.headcount"] [data-input]')
    headcount.clear()
    headcount.send_keys("11-500")
    shot(driver, "value-form-editor")
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    assert "Saved icp_definition" in driver.find_element(By.CSS_SELECTOR, ".messages").text
    entry = Entry.objects.get(account=demo.account, key="icp_definition", layer="account")
    assert entry.value["industry"] == ["SaaS", "Fintech", "DevTools"]
    assert entry.value["headcount"] == "11-500"
    assert entry.version == 2
    [kept] = driver.find_elements(By.CSS_SELECTOR, "article.version")
    added_lines = [s.text for s in kept.find_elements(By.CSS_SELECTOR, "pre.diff .add")]
    assert any("Fintech" in line for line in added_lines)
    assert csp_violations(driver) == []


def test_the_form_keeps_values_exact_places_problems_and_works_from_the_keyboard(
    live_kit, chromium, demo
):
    driver, base = chromium, live_kit.url
    owner = Actor.for_member(demo)
    entry_store(actor=owner, key="crm_ids", value={"hubspot": 9007199254740993, "tier": 1.0})
    entry_store(actor=owner, key="names", value={"prénom": "Ann", "tone": "warm", "ok": ["a", "b"]})
    sign_in(driver, base, "demo@kit.test")
    # A number a form cannot keep exactly stays JSON; saving another field keeps it.
    driver.get(f"{base}/business-memory/account/crm_ids/edit/")
    assert driver.find_element(By.ID, "id_value").is_displayed()
    assert "9007199254740993" in driver.find_element(By.CSS_SELECTOR, ".value-editor-note").text
    confidence = driver.find_element(By.ID, "id_confidence")
    confidence.clear()
    confidence.send_keys("60")
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    entry = Entry.objects.get(account=demo.account, key="crm_ids")
    assert (entry.value["hubspot"], entry.confidence) == (9007199254740993, 60)
    # Enter in a new field's name adds the field (it does not save the page).
    driver.get(f"{base}/business-memory/account/names/edit/")
    name = driver.find_element(By.CSS_SELECTOR, ".value-editor [data-new-field]")
    name.send_keys("sign_off", Keys.ENTER)
    assert driver.find_elements(By.CSS_SELECTOR, '[data-path="value.sign_off"]')
    assert Entry.objects.get(account=demo.account, key="names").version == 1
    # Removing a list item leaves the focus in the list.
    first = driver.find_element(By.CSS_SELECTOR, '[data-path="value.ok"] li.ve-item [data-remove]')
    first.click()
    focused = driver.switch_to.active_element
    assert focused.get_attribute("data-remove") is not None
    # A problem the server finds under a non-ASCII name lands beside that field.
    # A whole number stored as a decimal stays JSON too (a form would write 1.0 as 1).
    entry_store(actor=owner, key="weights", value={"fit": 1.0})
    driver.get(f"{base}/business-memory/account/weights/edit/")
    assert "1.0" in driver.find_element(By.CSS_SELECTOR, ".value-editor-note").text
    # A field named __proto__ is a field; a list ending in null takes new text items; a
    # field name already used is refused.
    entry_store(actor=owner, key="quirks", value={"__proto__": "kept", "maybe": ["a", None]})
    driver.get(f"{base}/business-memory/account/quirks/edit/")
    maybe = driver.find_element(By.CSS_SELECTOR, '[data-path="value.maybe"]')
    maybe.find_element(By.CSS_SELECTOR, "[data-add-item]").click()
    maybe.find_elements(By.CSS_SELECTOR, "li.ve-item [data-input]")[-1].send_keys("b")
    taken = driver.find_element(By.CSS_SELECTOR, ".value-editor [data-new-field]")
    taken.send_keys("maybe", Keys.ENTER)
    assert driver.execute_script("return arguments[0].validationMessage", taken)
    taken.clear()
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    quirks = Entry.objects.get(account=demo.account, key="quirks")
    assert quirks.value == {"__proto__": "kept", "maybe": ["a", None, "b"]}
    driver.get(f"{base}/business-memory/account/names/edit/")
    prenom = driver.find_element(By.CSS_SELECTOR, '[data-path="value.prénom"] [data-input]')
    prenom.send_keys("\u200b")
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    placed = driver.find_elements(By.CSS_SELECTOR, '[data-path="value.prénom"] > ul.errorlist')
    assert placed
    assert "ZERO WIDTH SPACE" in placed[0].text
    assert csp_violations(driver) == []


def test_a_second_editor_sees_the_conflict_and_loses_nothing(live_kit, chromium, demo):
    driver, base = chromium, live_kit.url
    sign_in(driver, base, "demo@kit.test")
    driver.get(f"{base}/business-memory/account/brand_voice/edit/")
    tone = driver.find_element(By.CSS_SELECTOR, '[data-path="value.tone"] [data-input]')
    tone.clear()
    tone.send_keys("short and direct")
    # Meanwhile another member (or an agent) stores a new version.
    current = Entry.objects.get(account=demo.account, key="brand_voice", layer="account")
    entry_store(
        actor=Actor.for_member(demo),
        key="brand_voice",
        value={**current.value, "sign_off": "the team"},
        expected_version=current.version,
    )
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    conflict = driver.find_element(By.ID, "conflict")
    assert "changed this entry while you were editing it" in conflict.text
    assert "the team" in conflict.text  # what they changed is shown
    kept = driver.find_element(By.CSS_SELECTOR, '[data-path="value.tone"] [data-input]')
    assert kept.get_attribute("value") == "short and direct"  # nothing of mine is lost
    shot(driver, "value-conflict")
    save = driver.find_element(By.ID, "save-entry")
    assert save.text == "Save mine over theirs"
    click_and_load(driver, save)
    entry = Entry.objects.get(account=demo.account, key="brand_voice", layer="account")
    assert (entry.version, entry.value["tone"]) == (3, "short and direct")
    assert csp_violations(driver) == []


def test_the_activity_page_after_an_agents_save(live_kit, chromium, demo):
    driver, base = chromium, live_kit.url
    bearer = token(demo, client_name="Claude Code", base_url=base)
    saved = httpx2.post(
        f"{base}/api/v1/notes",
        json={
            "domain": "newco.dev",
            "title": "Hiring",
            "body": "NewCo is hiring two account executives.",
            "source_urls": ["https://newco.dev/jobs"],
            "observed_at": "2026-11-30",
        },
        headers={"Authorization": f"Bearer {bearer}"},
        timeout=30,
    )
    assert saved.status_code == 201, saved.text
    sign_in(driver, base, "demo@kit.test")
    click_and_load(driver, driver.find_element(By.LINK_TEXT, "Activity"))
    first = driver.find_elements(By.CSS_SELECTOR, "table.activity tbody tr")[0]
    assert "newco.dev" in first.text
    assert "via Claude Code" in first.text
    shot(driver, "activity")
    click_and_load(driver, first.find_element(By.LINK_TEXT, "newco.dev"))
    assert "newco.dev" in driver.current_url
    assert csp_violations(driver) == []


def test_business_memory_tables_fit_a_laptop_and_a_phone(live_kit, chromium, demo):
    driver, base = chromium, live_kit.url
    sign_in(driver, base, "demo@kit.test")
    for width in (1024, 390):
        driver.set_window_size(width, 900)
        driver.get(f"{base}/business-memory/")
        overflow = driver.execute_script(
            "return Array.from(document.querySelectorAll('table.entries')).map("
            "t => t.scrollWidth - t.parentElement.clientWidth)"
        )
        assert overflow, width
        assert max(overflow) <= 1, (width, overflow)
        widths = driver.execute_script(
            "return Array.from(document.querySelectorAll('table.entries thead th:first-child'))"
            ".map(th => th.getBoundingClientRect().width)"
        )
        if width == 1024:
            assert max(widths) - min(widths) <= 1, widths  # the columns line up
    driver.set_window_size(1280, 1000)
    assert csp_violations(driver) == []


#: Every header that spills out of its cell, and every word of one that the browser split
#: across lines.
_BROKEN_WORDS = """
const broken = [];
for (const th of document.querySelectorAll('th')) {
  if (th.offsetParent !== null && th.scrollWidth > th.clientWidth + 1) broken.push('spills: ' + th.textContent.trim());
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/[^\\s-]+/g)) {  // a hyphen may break
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
      if (lines.size > 1) broken.push(match[0]);
    }
  }
}
return broken;
"""


def test_every_page_fits_a_phone_and_no_header_breaks_a_word(live_kit, chromium, demo):
    """At a phone's width (390 px) no page scrolls sideways, and at every width no column
    header is cut inside a word (it was: CONFIDE-NCE) or runs over the next one."""
    driver, base = chromium, live_kit.url
    sign_in(driver, base, "demo@kit.test")
    pages = ["/", "/business-memory/", "/activity/", "/health/", "/search/?q=hiring"]
    try:
        for width in (390, 768, 920, 1024, 1280):
            driver.set_window_size(width, 900)
            for page in pages:
                driver.get(f"{base}{page}")
                sideways = driver.execute_script(
                    "return document.documentElement.scrollWidth"
                    " - document.documentElement.clientWidth"
                )
                assert sideways <= 1, (width, page, sideways)
                assert driver.execute_script(_BROKEN_WORDS) == [], (width, page)
                if width == 390 and page == "/health/":
                    shot(driver, "health-phone")
    finally:
        driver.set_window_size(1280, 1000)
