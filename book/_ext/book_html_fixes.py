"""Small HTML fixes for the jupyter-book 1.x stack, found by the browser test (tests/browser).

* sphinx-thebe 0.3.1 registers its inline configuration script once per ``env-before-read-docs``
  event, and jupyter-book fires that event twice, so every page declared ``const THEBE_JS_URL``
  twice: a console ``SyntaxError``. We drop exact duplicate scripts from each page's context (an inline
  script's filename is ``None`` in one copy and ``''`` in the other, so both count as empty).
* pydata-sphinx-theme 0.17 under sphinx-book-theme 1.3 renders an empty default colour mode and
  logs "Got invalid theme mode" on every page; we set the default mode explicitly.
"""


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts:
        seen, kept = set(), []
        for js in scripts:
            attrs = getattr(js, "attributes", {}) or {}
            key = (getattr(js, "filename", str(js)) or "", tuple(sorted((k, str(v)) for k, v in attrs.items())))
            if key not in seen:
                seen.add(key)
                kept.append(js)
        context["script_files"] = kept
    if not context.get("default_mode"):
        context["default_mode"] = "light"


def setup(app):
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
