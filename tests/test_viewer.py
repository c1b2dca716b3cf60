"""The trace viewer in a real headless browser (Debian's Chromium, driven by Selenium): ask on the
page, watch the answer come, and find every document with its scores."""

import shutil

import pytest

QUESTION = "Who won the senate race of Georgia in the 2022 U.S. midterm elections?"


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromedriver"), reason="needs chromium and chromium-driver (.ci/setup: apt)")
def test_the_viewer_shows_the_answer_and_every_document_with_its_scores(kcard_server, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,1500"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium")
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        browser.get(kcard_server)
        wait = WebDriverWait(browser, 300)
        wait.until(lambda b: len(Select(b.find_element(By.ID, "model")).options) >= 4)
        Select(browser.find_element(By.ID, "model")).select_by_value("kcard-bottom-up")
        browser.find_element(By.ID, "question").send_keys(QUESTION)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda b: b.find_elements(By.ID, "documents"))
        assert "Warnock" in browser.find_element(By.ID, "answer").text
        rows = browser.find_elements(By.CSS_SELECTOR, "#documents tr")[1:]
        headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#documents th")]
        assert {"relevance", "factuality"} <= set(headers) and len(rows) >= 3
        assert any("used" in row.get_attribute("class") for row in rows)  # the kept document is marked
        scores = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#documents td.num")]
        assert scores and all(text.split()[0].replace(".", "", 1).isdigit() for text in scores)
        assert "midterm2022-news" in browser.find_element(By.ID, "cards").text
        assert browser.find_elements(By.CSS_SELECTOR, "#seconds .bar")  # time per stage, drawn
        browser.save_screenshot(str(tmp_path / "viewer.png"))
    finally:
        browser.quit()
