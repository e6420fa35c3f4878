// The review page's only script: filters apply on change, and a decision form submits once.
document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form[data-autosubmit]")) {
    for (const select of form.querySelectorAll("select")) {
      select.addEventListener("change", () => form.requestSubmit());
    }
  }
  for (const form of document.querySelectorAll("form[data-once]")) {
    form.addEventListener("submit", (event) => {
      // disable after the submitter's value is in the form data, so a double click posts once
      const buttons = form.querySelectorAll("button");
      setTimeout(() => buttons.forEach((b) => { b.disabled = true; }), 0);
      if (event.submitter) event.submitter.textContent += "…";
    });
  }
});
