"""Debian's headless Chromium driven by Selenium, for the browser tests: the driver
fixture (in ``conftest``), page loads that wait for the new page, screenshots, and the
console's Content-Security-Policy reports."""

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = Path(
    os.environ.get("KIT_ARTIFACTS_DIR", Path(__file__).resolve().parents[2] / "artifacts")
)
PASSWORD = "kit-demo-password"


def chromium_driver():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        return None

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    # Console messages are read back to catch Content-Security-Policy violations.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return driver


def _gone(element) -> bool:
    """Whether ``element`` left the document (a new page replaced it). ChromeDriver may say
    so with "does not belong to the document" instead of a stale-element error when the
    page goes while it looks."""
    try:
        return expected_conditions.staleness_of(element)(None)
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


def click_and_load(driver, element):
    """Click something that loads a new page, and wait until the new page is there."""
    old = driver.find_element(By.TAG_NAME, "html")
    try:
        element.click()
    except WebDriverException as error:
        # The click started the navigation before ChromeDriver finished looking at the
        # element ("does not belong to the document"): the new page is on its way.
        if "does not belong to the document" not in str(error):
            raise
    WebDriverWait(driver, 20).until(lambda d: _gone(old))
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def csp_violations(driver) -> list[str]:
    return [
        entry["message"]
        for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"]
        or "Content-Security-Policy" in entry["message"]
    ]


def shot(driver, name):
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def sign_in(driver, base: str, username: str, password: str = PASSWORD) -> None:
    driver.get(f"{base}/accounts/login/")
    driver.find_element(By.NAME, "username").send_keys(username)
    driver.find_element(By.NAME, "password").send_keys(password)
    click_and_load(driver, driver.find_element(By.CSS_SELECTOR, "button[type=submit]"))
