"""Business memory in a real browser against a live Kit: a module admin edits an account
entry, sees the new version and what changed in the history, and restores the old one."""

import json

import pytest
from django.contrib.auth.hashers import make_password
from django.core.management import call_command
from selenium.webdriver.common.by import By

from outreach.models import Member
from prospect_memory.business.models import Entry
from tests.browser.chrome import PASSWORD, click_and_load, csp_violations, shot, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_admin_edits_an_entry_and_restores_the_old_version(live_kit, chromium):
    call_command("seed_demo", "--allow-insecure-demo", verbosity=0)
    call_command("seed_demo_business_memory", verbosity=0)
    owner = Member.objects.select_related("user").get(
        account__slug="demo", user__username="demo@kit.test"
    )
    owner.user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    owner.user.save()
    driver, base = chromium, live_kit.url
    original = Entry.objects.get(key="brand_voice", layer="account").value

    sign_in(driver, base, "demo@kit.test")
    click_and_load(driver, driver.find_element(By.LINK_TEXT, "Business memory"))
    assert "Business memory" in driver.find_element(By.TAG_NAME, "h1").text
    keys = [
        e.get_attribute("data-key") for e in driver.find_elements(By.CSS_SELECTOR, "tr[data-key]")
    ]
    assert {"icp_definition", "deal_score_rubric", "brand_voice", "product_catalog"} <= set(keys)
    assert "signature" in keys  # the member's own context
    shot(driver, "business-memory")

    click_and_load(driver, driver.find_element(By.LINK_TEXT, "brand_voice"))
    assert "synergy" in driver.find_element(By.ID, "entry-value").text
    click_and_load(driver, driver.find_element(By.ID, "edit-entry"))
    # Edited as JSON here (the form editor has its own test): the fallback stays usable.
    edited = {**original, "tone": "direct and friendly"}
    driver.find_element(By.CSS_SELECTOR, "[data-toggle-json]").click()
    box = driver.find_element(By.ID, "id_value")
    box.clear()
    box.send_keys(json.dumps(edited))
    click_and_load(driver, driver.find_element(By.ID, "save-entry"))
    assert (
        "Saved brand_voice as a new version."
        in driver.find_element(By.CSS_SELECTOR, ".messages").text
    )
    assert "direct and friendly" in driver.find_element(By.ID, "entry-value").text
    [version] = driver.find_elements(By.CSS_SELECTOR, "article.version")
    assert version.get_attribute("data-version") == "1"
    added = [s.text for s in version.find_elements(By.CSS_SELECTOR, "pre.diff .add")]
    assert any("direct and friendly" in line for line in added)
    shot(driver, "business-entry-history")

    click_and_load(driver, version.find_element(By.LINK_TEXT, "Restore this version"))
    assert "Make version 1" in driver.find_element(By.TAG_NAME, "h1").text
    click_and_load(driver, driver.find_element(By.ID, "confirm-restore"))
    assert (
        "Version 1 is current again, as version 3."
        in driver.find_element(By.CSS_SELECTOR, ".messages").text
    )
    entry = Entry.objects.get(key="brand_voice", layer="account")
    assert (entry.value, entry.version) == (original, 3)
    assert len(driver.find_elements(By.CSS_SELECTOR, "article.version")) == 2
    assert csp_violations(driver) == []
