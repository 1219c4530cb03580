"""aster-serve's page in a real browser: headless Debian chromium, driven by selenium through
chromedriver, against the shipped model served on 127.0.0.1 (issue 45 item 3).

Skipped, with the reason, where chromium, chromedriver, selenium or the shipped model is missing
(.ci/run installs chromium and chromium-driver). ASTER_SERVE_SCREENSHOT=path.png also saves a
screenshot of the page with its result.
"""

import os
import shutil
import time

import pytest
import word_images
from serve_fixtures import image_bytes, multipart, request, running_server

from aster import pretrained
from aster.serve import app as app_lib
from aster.serve import batching, loading

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--window-size=1000,700")
WORD = "serve"


def _browser_parts():
    """(chromium, chromedriver) paths, or skip naming what is missing."""
    pytest.importorskip("selenium", reason="selenium is not installed (the dev extra has it)")
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs "
                    f"them as root): chromium={chromium}, chromedriver={driver}")
    return chromium, driver


def render_word(path, word=WORD):
    """A dark word on a light background, in Pillow's own scalable font (no font files)."""
    word_images.draw_word(word, margin=(12, 8), fill=(20, 30, 90),
                          background=(250, 245, 230)).save(path)
    return path


@pytest.fixture(scope="module")
def shipped_server():
    """The shipped model served on 127.0.0.1; yields the port."""
    try:
        pretrained.model_files()
    except pretrained.ModelFolderError as e:
        pytest.skip(f"no shipped model: {e}")
    predictor, info = loading.load_model()
    batcher = batching.Batcher(predictor)
    try:
        with running_server(app_lib.build_app(batcher, info)) as port:
            yield port
    finally:
        batcher.close()
        predictor.close()


@pytest.fixture
def browser(tmp_path):
    chromium, driver_path = _browser_parts()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.slow
def test_page_reads_an_uploaded_word_and_shows_the_rectified_image(shipped_server, browser,
                                                                   tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    path = render_word(str(tmp_path / f"{WORD}.png"))
    with open(path, "rb") as f:
        status, api = request(shipped_server, "POST", "/v1/recognize",
                              *multipart([(f"{WORD}.png", f.read())]))
    assert status == 200 and api["results"][0]["text"] == WORD

    browser.get(f"http://127.0.0.1:{shipped_server}/")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "model").text.startswith("Model: aster_base"))
    status, model = request(shipped_server, "GET", "/v1/model")
    assert status == 200 and model["protocol"]
    # The figures say how they were scored (a 94-class model's are protocol 36's).
    assert browser.find_element(By.ID, "model").text.endswith(f"(scored {model['protocol']})")
    browser.find_element(By.ID, "files").send_keys(path)
    text = WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".result .text"))[0].text
    assert text == WORD
    assert browser.find_element(By.CSS_SELECTOR, ".result figcaption").text == f"{WORD}.png"
    assert "score" in browser.find_element(By.CSS_SELECTOR, ".result .score").text
    rectified = browser.find_element(By.CSS_SELECTOR, ".result img.rectified")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", rectified):
        time.sleep(0.1)
    # The shipped model rectifies to its 32 x 160 input; the page draws it 64 px high.
    assert browser.execute_script("return [arguments[0].naturalWidth, arguments[0].naturalHeight]",
                                  rectified) == [160, 32]
    assert rectified.is_displayed() and rectified.size["height"] >= 64  # and its 1 px border
    canvas = browser.find_element(By.CSS_SELECTOR, ".result canvas.input")
    assert browser.execute_script("return [arguments[0].height, arguments[0].width > 64]",
                                  canvas) == [64, True]
    assert browser.find_element(By.ID, "status").text == "Read 1 image(s)."
    if os.environ.get("ASTER_SERVE_SCREENSHOT"):
        browser.save_screenshot(os.environ["ASTER_SERVE_SCREENSHOT"])


@pytest.mark.slow
def test_page_shows_the_error_of_an_unreadable_file(shipped_server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    broken = tmp_path / "broken.png"
    broken.write_bytes(image_bytes(200, 60)[:100])
    browser.get(f"http://127.0.0.1:{shipped_server}/")
    browser.find_element(By.ID, "files").send_keys(str(broken))
    message = WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".result.error .message"))[0].text
    assert message.startswith("damaged image (")
    assert browser.find_element(By.ID, "status").text.startswith("Error 400: none of the 1")
