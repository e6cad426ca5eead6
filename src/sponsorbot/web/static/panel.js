// Sponsorbot panel: the behaviours plain forms cannot give. Every form still works without
// this file (the upload posts normally; the gate's number fields set the order).
// The pages' Content-Security-Policy allows no inline script or style, so every handler and
// every computed style is set here, from data attributes.
"use strict";

// htmx would add a <style> element for its indicators, which the policy refuses.
if (window.htmx) window.htmx.config.includeIndicatorStyles = false;

(function () {
  const csrf = () => JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"];
  const persian = () => document.documentElement.lang === "fa";
  const percent = (n) => n.toLocaleString(persian() ? "fa-IR" : "en") + (persian() ? "٪" : "%");

  // -- upload with a progress bar ---------------------------------------------------------
  function bindUpload(form) {
    const input = form.querySelector("input[type=file]");
    const error = form.querySelector("#e-file");
    const box = form.querySelector(".progress");
    const bar = box.querySelector("progress");
    const label = box.querySelector("output");
    const button = form.querySelector("button.primary");

    const tooLarge = () => input.files[0] && input.files[0].size > Number(form.dataset.limit);

    function fail(message) {
      error.textContent = message;
      error.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.closest(".field").classList.add("has-error");
    }

    input.addEventListener("change", () => {
      error.hidden = true;
      input.removeAttribute("aria-invalid");
      input.closest(".field").classList.remove("has-error");
      // Said at once: nobody should wait for 50 MB to travel to learn it is too much.
      if (tooLarge()) fail(form.dataset.tooLarge);
    });

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (tooLarge()) return fail(form.dataset.tooLarge);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.setRequestHeader("X-CSRF-Token", csrf());
      xhr.setRequestHeader("HX-Request", "true"); // a success answers 204 + HX-Redirect
      xhr.upload.addEventListener("progress", (e) => {
        if (!e.lengthComputable) return;
        bar.value = Math.floor((100 * e.loaded) / e.total);
        label.textContent = percent(bar.value);
      });
      xhr.upload.addEventListener("load", () => {
        bar.value = 100;
        label.textContent = form.dataset.sending; // now the server posts it to Telegram
      });
      xhr.addEventListener("load", () => {
        const target = xhr.getResponseHeader("HX-Redirect");
        if (xhr.status === 204 && target) {
          window.location.assign(target);
          return;
        }
        // An error page: take its upload card (the error next to the field) into this page.
        const fresh = new DOMParser().parseFromString(xhr.responseText, "text/html");
        const card = fresh.querySelector("#upload");
        if (card) {
          document.querySelector("#upload").replaceWith(card);
          const next = card.querySelector("form[data-upload]");
          if (next) bindUpload(next);
        } else {
          box.hidden = true;
          button.disabled = false;
          fail(form.dataset.failed);
        }
      });
      xhr.addEventListener("error", () => {
        box.hidden = true;
        button.disabled = false;
        fail(form.dataset.failed);
      });
      bar.value = 0;
      label.textContent = percent(0);
      box.hidden = false;
      button.disabled = true;
      xhr.send(new FormData(form));
    });
  }

  // -- drag to order the gate --------------------------------------------------------------
  // Pointer events rather than HTML drag and drop: they work with a finger on a phone too.
  function bindSortable(body) {
    const status = body.closest("form").querySelector(".sort-status");
    let dragged = null;

    function renumber() {
      body.querySelectorAll("tr").forEach((row, i) => {
        const field = row.querySelector("input[data-number]");
        if (field) field.value = (i + 1).toLocaleString(persian() ? "fa-IR" : "en", { useGrouping: false });
      });
    }

    async function save() {
      const data = new FormData();
      body.querySelectorAll("tr").forEach((row) => data.append("order", row.dataset.id));
      status.textContent = "";
      try {
        const answer = await fetch(body.dataset.sortable, {
          method: "POST",
          body: data,
          headers: { "X-CSRF-Token": csrf() },
          redirect: "manual",
        });
        status.textContent = answer.status === 204 ? body.dataset.saved : body.dataset.failed;
      } catch (e) {
        status.textContent = body.dataset.failed;
      }
    }

    body.addEventListener("pointerdown", (event) => {
      const handle = event.target.closest(".drag");
      if (!handle) return;
      event.preventDefault();
      dragged = handle.closest("tr");
      dragged.classList.add("dragging");
      handle.setPointerCapture(event.pointerId);
    });
    body.addEventListener("pointermove", (event) => {
      if (!dragged) return;
      const over = document.elementFromPoint(event.clientX, event.clientY);
      const row = over && over.closest("tr");
      if (!row || row === dragged || row.parentElement !== body) return;
      const box = row.getBoundingClientRect();
      const after = event.clientY > box.top + box.height / 2;
      body.insertBefore(dragged, after ? row.nextSibling : row);
    });
    const drop = () => {
      if (!dragged) return;
      dragged.classList.remove("dragging");
      dragged = null;
      renumber();
      save();
    };
    body.addEventListener("pointerup", drop);
    body.addEventListener("pointercancel", drop);
  }

  // -- small behaviours, delegated so content htmx swaps in gets them too ---------------------
  document.addEventListener("click", (event) => {
    const field = event.target.closest("input.copy");
    if (field) field.select();
    const copy = event.target.closest(".copy-button[data-link]");
    if (copy) {
      navigator.clipboard.writeText(copy.dataset.link).then(() => copy.classList.add("done"));
    }
    const button = event.target.closest("button[data-confirm]");
    if (button && !window.confirm(button.dataset.confirm)) event.preventDefault();
  });
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.matches("form[data-confirm]") && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });
  document.addEventListener("change", (event) => {
    const select = event.target.closest("select[data-autosubmit]");
    if (select) select.form.requestSubmit();
    // The translated file control (_form.html's file_input) names the file chosen.
    const pick = event.target.closest(".file-pick");
    if (pick) {
      const name = pick.querySelector("[data-file-name]");
      const file = event.target.files && event.target.files[0];
      name.textContent = file ? file.name : name.dataset.none;
    }
  });

  // Bar heights as a custom property: set through the CSSOM, which the policy allows.
  function sizeBars(root) {
    root.querySelectorAll("[data-h]").forEach((bar) => {
      bar.style.setProperty("--h", `${Number(bar.dataset.h)}%`);
    });
  }

  // -- bot settings: find a visitor text by what it is for or says, or only the changed ones --
  function bindTextSearch(box) {
    const query = box.querySelector("#text-search");
    const customOnly = box.querySelector("#text-custom-only");
    const none = document.getElementById("text-none");
    const blocks = Array.from(document.querySelectorAll(".text-block[data-search]"));
    function filter() {
      const words = query.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      blocks.forEach((block) => {
        const hit = words.every((w) => block.dataset.search.includes(w)) &&
          (!customOnly.checked || block.classList.contains("custom"));
        block.hidden = !hit;
        if (hit) shown += 1;
      });
      document.querySelectorAll(".text-group").forEach((group) => {
        group.hidden = !group.querySelector(".text-block:not([hidden])");
      });
      none.hidden = shown > 0;
    }
    box.hidden = false;
    query.addEventListener("input", filter);
    customOnly.addEventListener("change", filter);
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll(".text-search").forEach(bindTextSearch);
    document.querySelectorAll("form[data-upload]").forEach(bindUpload);
    document.querySelectorAll("tbody[data-sortable]").forEach(bindSortable);
    sizeBars(document);
  });
  document.addEventListener("htmx:afterSwap", (event) => sizeBars(event.target));
})();
