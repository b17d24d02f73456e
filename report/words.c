/* The report's words: the glossary at the foot of the page, labels that
 * link to it, and the failed attempts' causes in the glossary's names.
 *
 * The page is offline (no fetch), so the definitions travel with it: every
 * term of core/glossary.c is listed under "Words on this page", and a label
 * that uses one links to its entry (#w-TERM) with the sense as its tooltip.
 * The text is the same tl_glossary[] that docs/glossary.md is held to. */
#include <string.h>

#include "core/aggregate.h"
#include "core/glossary.h"
#include "report/report.h"
#include "report/svg.h"

/* The anchor of a term: "w-" and the term with its spaces as '-'. */
static void anchor(FILE *o, const char *term)
{
    fputs("w-", o);
    for (const char *p = term; *p; p++) fputc(*p == ' ' ? '-' : *p, o);
}

static const struct tl_term *find_term(const char *term)
{
    for (size_t i = 0; i < tl_glossary_count; i++)
        if (!strcmp(tl_glossary[i].term, term)) return &tl_glossary[i];
    return NULL;
}

void tl_report_term(FILE *o, const char *term, const char *text)
{
    const struct tl_term *t = find_term(term);
    if (!t) { /* a label that names no term: a defect the report test reports */
        tl_html_esc(o, text);
        return;
    }
    fputs("<a class=\"term\" href=\"#", o);
    anchor(o, term);
    fputs("\" title=\"", o);
    tl_html_esc(o, t->sense);
    fputs("\">", o);
    tl_html_esc(o, text);
    fputs("</a>", o);
}

void tl_report_words(FILE *o)
{
    fputs("<h2 id=\"words\">Words on this page</h2><p class=\"note\">Each word means this on every "
          "tasklens surface (docs/glossary.md).</p><dl class=\"words\">", o);
    for (size_t i = 0; i < tl_glossary_count; i++) {
        fputs("<dt id=\"", o);
        anchor(o, tl_glossary[i].term);
        fputs("\">", o);
        tl_html_esc(o, tl_glossary[i].term);
        fputs("</dt><dd>", o);
        tl_html_esc(o, tl_glossary[i].sense);
        fputs("</dd>", o);
    }
    fputs("</dl>\n", o);
}

void tl_report_causes(FILE *o, const struct tl_agg_group *g)
{
    bool first = true;
    for (int c = TL_CAUSE_NONE + 1; c < TL_CAUSE_COUNT; c++) {
        if (!g->causes[c]) continue;
        fprintf(o, "%s<span data-cause=\"%s\" data-v=\"%llu\" class=\"bad\">%s %llu</span>",
                first ? "" : " · ", tl_cause_name((enum tl_cause)c), (unsigned long long)g->causes[c],
                tl_cause_label((enum tl_cause)c), (unsigned long long)g->causes[c]);
        first = false;
    }
}
