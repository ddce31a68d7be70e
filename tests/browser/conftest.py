import pytest

from tests.browser.chrome import chromium_driver


@pytest.fixture
def chromium():
    driver = chromium_driver()
    if driver is None:
        pytest.skip("Chromium/ChromeDriver are not installed (scripts/browser-deps installs them)")
    yield driver
    driver.quit()
