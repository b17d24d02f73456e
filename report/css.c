/* The report page's style sheet (html.c puts it in the page's head): one
 * place for how the page looks. Lines differ by lightness and dash, not hue
 * alone, so the page reads in grayscale; the task table and the timeline
 * add their own few rules beside their markup (tasks.c). */
#include "report/report.h"

const char tl_report_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111;background:#fff}"
    "h1{font-size:1.5em;overflow-wrap:anywhere}h2{margin-top:2em;border-bottom:1px solid #999}h3{margin:1.5em 0 .3em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;"
    "text-align:right;white-space:nowrap}th{background:#eee}th.wrap{white-space:normal}td.n,th.n{text-align:left}"
    "td.n{max-width:30em}td.long{white-space:normal;overflow-wrap:anywhere;min-width:12em}td.parts{white-space:normal;overflow-wrap:break-word;max-width:24em;width:24em}td.qs{white-space:normal}td.qs span{white-space:nowrap}"
    "th[colspan]{text-align:center}"
    ".card{display:flex;flex-wrap:wrap;gap:6px 10px;margin:1em 0}.stat{border:1px solid #bbb;"
    "padding:4px 10px;min-width:7em}.stat b{display:block;font-size:1.25em}.stat span{"
    "font-size:.85em;color:#444}"
    ".approx{font-style:italic}.shift{background:#9b1c1c;color:#fff;font-weight:bold}.shift.better{background:#1d5e2f}"
    ".bad{background:#ddd;font-weight:bold}.note{color:#444;font-size:.9em}"
    "a.term{color:inherit;text-decoration:underline dotted}dl.words dt{font-weight:bold}"
    "dl.words dd{margin:0 0 .4em 1.5em}"
    ".wide{overflow-x:auto;max-width:100%}nav a{margin-right:1em}.row{display:flex;flex-wrap:wrap;gap:8px}"
    "svg.plot{background:#fff;max-width:100%;height:auto}.frame{fill:none;stroke:#888}.grid{stroke:#e4e4e4}"
    ".tick{stroke:#888}.tl{font-size:10px;fill:#333}.al{font-size:11px;fill:#111}"
    ".bar{fill:#3b6ea8}.bar:hover,.pt:hover{fill:#000}.cdf{fill:none;stroke:#111;stroke-width:1.5}"
    ".cdf.base{stroke:#999;stroke-dasharray:4 2}.whisk{stroke:#555}.box{fill:#3b6ea8;fill-opacity:.55;"
    "stroke:#1d3d63}.med{stroke:#000;stroke-width:2}.alloc{fill:#d9822b;stroke:#7a3f00}.q50,.q95,.q99{stroke-width:1.5}.q50{stroke:#555;stroke-dasharray:2 2}"
    ".q95{stroke:#000;stroke-dasharray:6 3}.q99{stroke:#000}.ql{font-size:10px;paint-order:stroke;stroke:#fff;stroke-width:3px}"
    ".pt{fill:#d9822b;fill-opacity:.6;stroke:#7a3f00;stroke-width:.5}.diag{stroke:#999;"
    "stroke-dasharray:4 3}.rec{stroke:#000;stroke-width:1.5}"
    ".waiting{fill:none;stroke:#999;stroke-width:1.5;stroke-dasharray:5 3}"
    ".running{fill:none;stroke:#3b6ea8;stroke-width:2}.cores{fill:none;stroke:#000;"
    "stroke-width:1.2}.conn{fill:none;stroke:#d9822b;stroke-width:2;stroke-dasharray:1 2}"
    ".done{fill:none;stroke:#111;stroke-width:2}.bin{fill:transparent}.bin:hover{fill:#0001}"
    ".key{display:inline-block;width:2em;border-top:2px solid #000;vertical-align:middle;"
    "margin:0 .3em}"
    "table.lines td.code{font-family:ui-monospace,monospace;white-space:pre;max-width:60em;overflow:hidden;"
    "text-overflow:ellipsis}tr.hot td{background:#fde8cf;font-weight:bold}h3.fn{font-family:ui-monospace,"
    "monospace;font-size:1em;overflow-wrap:anywhere}";
