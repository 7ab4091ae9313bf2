"""The page's own stylesheet and script are inlined lighter: nothing the browser reads changes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from report_helpers import feature, run, scenario

from mcp_bdd.report.minify import minify_css, minify_js
from mcp_bdd.report.render import render_html

TEMPLATES = Path(__file__).resolve().parents[2] / "mcp_bdd" / "report" / "templates"


def test_css_loses_comments_and_layout_but_keeps_strings_and_the_spaces_that_mean_something() -> None:
    css = """/* a comment */
.a > .b ,  .c:hover::before {
  content: "✓  /* not a comment */ ; }";
  margin: 0 0 calc(100% - 24px) 4px;  /* trailing */
  font: 15px/1.55 "Segoe UI", sans-serif;
}
@media (max-width: 640px) and (hover: none) {
  .d .e { color: red !important; }
}
"""
    assert minify_css(css) == (
        '.a>.b, .c:hover::before{content:"✓  /* not a comment */ ; }";margin:0 0 calc(100% - 24px) 4px;'
        'font:15px/1.55 "Segoe UI", sans-serif}@media (max-width:640px) and (hover:none){.d .e{color:red !important}}'
    )


def test_js_loses_whole_comment_lines_and_indentation_only() -> None:
    js = """/* a header
   over two lines */
(function () {
  "use strict";
  // a note
  var a = "  // kept", b = /\\/* kept */; // kept too
  /* one line */
  return a + b;
})();
"""
    assert (
        minify_js(js)
        == '(function () {\n"use strict";\nvar a = "  // kept", b = /\\/* kept */; // kept too\nreturn a + b;\n})();'
    )
    # what it was not written for is left as it is
    for text in ("var s = `a\n  b`;\n", 'var s = "a\\\n  b";\n', "/* a\n */ var x = 1;\n", "/* never closed\n"):
        assert minify_js(text) == text


def test_the_shipped_files_are_minified_and_the_script_still_parses(tmp_path: Path) -> None:
    css, js = (
        (TEMPLATES / "report.css").read_text(encoding="utf-8"),
        (TEMPLATES / "report.js").read_text(encoding="utf-8"),
    )
    small_css, small_js = minify_css(css), minify_js(js)
    assert len(small_css) < 0.9 * len(css) and "/*" not in small_css
    assert small_js != js, "report.js has something minify_js leaves alone (a template literal?): it ships unminified"
    assert len(small_js) < 0.9 * len(js)
    html = render_html([run(feature("f", scenario("f--s")))])
    assert f"<style>{small_css}</style>" in html and f"<script>{small_js}</script>" in html
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the script's syntax is checked by the browser tests only")
    path = tmp_path / "report.js"
    path.write_text(small_js, encoding="utf-8")
    done = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
