/* The metadata fast scanners against Jansson and libyaml (md_agree.h):
 * shapes the LSST tools write must take the fast path and give the
 * library's tree; inputs where the library would decide differently
 * (duplicate keys, overflow, escapes, YAML folding, comments, anchors...)
 * must fall back. */
#include "check.h"
#include "md_agree.h"

struct tcase {
    bool json;
    int fast; /* 1: must be accepted by the fast scanner, 0: must fall back */
    const char *text;
};

static const struct tcase cases[] = {
    /* JSON TaskMetadata, compact, with bare constants */
    {true, 1, "{\"scalars\":{},\"arrays\":{},\"metadata\":{\"quantum\":{\"scalars\":{\"__version__\":1,"
              "\"nodeName\":\"sdf1\"},\"arrays\":{\"endCpuTime\":[0.5,12.25],\"endUtc\":"
              "[\"2026-02-05T17:52:57.668196+00:00\"]}},\"t\":{\"scalars\":{\"odd\":NaN,\"big\":Infinity,"
              "\"small\":-Infinity,\"n\":null,\"b\":true,\"c\":false}}}}"},
    {true, 1, " {\n \"a\" : [ 1 , -2.5e-3 , 0 , -0 , 1E5 , 123456789012345678 ] ,\"s\":\"x\\\"\\\\\\/\\n\\t\"}\r\n"},
    {true, 1, "{\"a\":{},\"b\":[],\"c\":[[]],\"d\":\"\"}"},
    {true, 1, "{\"x\":1e299,\"y\":1e-400,\"z\":0.000001}"},
    /* what only Jansson may decide */
    {true, 0, "{\"a\":1,\"a\":2}"},                          /* duplicate key: rejected */
    {true, 0, "{\"a\":1,\"b\":{\"k\":1,\"k\":2}}"},           /* nested duplicate */
    {true, 0, "{\"ab\":1,\"a\\u0062\":2}"},                  /* \u escape (a duplicate too) */
    {true, 0, "{\"a\":1234567890123456789012}"},              /* integer overflow */
    {true, 0, "{\"a\":1e400}"},                              /* real overflow */
    {true, 0, "{\"a\":01}"},                                 /* leading zero */
    {true, 0, "{\"a\":1.000000000000000000000000000000000000000000000000000000000000000000000000000000"
              "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
              "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
              "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
              "00000000000000000000000000000000000000000000000000000000000000000000000000000000000001}"},
    {true, 0, "{\"a\":1.}"},
    {true, 0, "{\"a\":.5}"},
    {true, 0, "{\"a\":-}"},
    {true, 0, "{\"a\":\"\xc3\xa9\"}"},                       /* UTF-8: Jansson checks it */
    {true, 0, "{\"a\":\"\x01\"}"},                           /* control character */
    {true, 0, "{\"a\":1,}"},                                 /* trailing comma */
    {true, 0, "{\"a\":1} x"},                                /* trailing text */
    {true, 0, "{\"a\":NaNx}"},
    {true, 0, "{\"a\":truex}"},
    {true, 0, "[1,2]"},                                      /* the walk wants an object */
    {true, 0, "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]"
              "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"},  /* deeper than MD_MAX_DEPTH */
    /* PropertySet YAML as daf_base writes it, three entry styles */
    {false, 1, "!<lsst.daf.base.PropertySet>\n- - quantum\n  - PropertySet\n  - !<lsst.daf.base.PropertyList>\n"
               "    - [prepUtc, String, '2023-11-22T03:38:22.665095', '']\n"
               "    - [endCpuTime, Double, [0.5, 131.88882957048042], '']\n"
               "    - !!python/tuple [nodeName, String, 'it''s', '']\n"
               "    - [ odd , Double, .nan, '' ]\n"
               "- - task:sub\n  - PropertySet\n  - !<lsst.daf.base.PropertySet>\n    - [n, LongLong, 5]\n"
               "- [__version__, LongLong, 1]\n"},
    {false, 1, "!<lsst.daf.base.PropertyList>\n- [SIMPLE, Bool, true, '']\n- [BITPIX, Int, 16, array data type]\n"
               "- [LST-STR, String, '22:40:45.506', '']\n- [E, Double, -1.5e-05, \"dq\"]\n"},
    /* a flow sequence PyYAML wrapped at 80 columns */
    {false, 1, "- - quantum\n  - PropertySet\n  - !<lsst.daf.base.PropertySet>\n"
               "    - [endMaxResidentSetSize, LongLong, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,\n"
               "        15, 16], '']\n"},
    /* plain mappings */
    {false, 1, "task:\n  nodeName: node007\nquantum:\n  prepUtc: '2023-11-22T03:38:22.665095+00:00'\n"
               "  endCpuTime: 12.5\n  list: [1, 2]\n  nested:\n    k: v\n  x: a:b c,d\n\n"},
    {false, 1, "- a: 1\n  b: 2\n- - x\n  - y\n"},
    /* what only libyaml may decide */
    {false, 0, "quantum:\n  a: one\n    two\n"},               /* a folded plain scalar */
    {false, 0, "- [a, b\n   c]\n"},                          /* folded inside a flow sequence */
    {false, 0, "- a\n  - b\n"},                              /* "a - b", one scalar */
    {false, 0, "- a\n  b\n"},                                /* "a b" */
    {false, 0, "quantum:\n  a: 1 # comment\n"},
    {false, 0, "a: &x 1\nb: *x\n"},                          /* anchor, alias */
    {false, 0, "a:\n- 1\n- 2\n"},                            /* indentless sequence */
    {false, 0, "a: 'two\n  lines'\n"},
    {false, 0, "a: \"esc\\n\"\n"},
    {false, 0, "a:\tb\n"},
    {false, 0, "a: b\r\n"},
    {false, 0, "--- \na: b\n"},
    {false, 0, "a: b\n...\n"},
    {false, 0, "a: {b: c}\n"},
    {false, 0, "a: |\n  text\n"},
    {false, 0, "- [a, ]\n"},
    {false, 0, "- [a: b]\n"},
    {false, 0, "a:\n"},                                      /* empty value */
    {false, 0, "- \n"},
    {false, 0, "just a scalar\n"},
    {false, 0, "a: b: c\n"},
    {false, 0, "a: b\n c: d\n"},
    {false, 0, "? a\n: b\n"},
    {false, 0, "a: caf\xc3\xa9\n"},
    {false, 0, "a: !foo b\n"},
    /* a line of a flow sequence at column 0 that reads as a document marker
     * (libyaml: an error; found by fuzz_md_tree) */
    {false, 0, "!<let> [\n--- ]\n"},
    {false, 0, "[a,\n... ]\n"},
    {false, 0, "[a\n---, b]\n"},
};

int main(void)
{
    int fast_ok = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct tcase *c = &cases[i];
        enum md_rc rc;
        bool agree = md_agree(c->json, c->text, strlen(c->text), &rc);
        if (!agree) fprintf(stderr, "case %zu: the fast tree differs from the library's\n", i);
        CHECK(agree);
        if ((rc == MD_OK) != (c->fast == 1))
            fprintf(stderr, "case %zu: fast scanner %s\n", i, rc == MD_OK ? "accepted" : "fell back");
        CHECK((rc == MD_OK) == (c->fast == 1));
        fast_ok += rc == MD_OK;
    }
    /* the tree itself: values a walk reads */
    struct md_tree t = {0};
    md_tree_reset(&t, 1000);
    const char *doc = "{\"q\":{\"k\":[1,\"x\",2.5]},\"n\":-12}";
    CHECK(md_json_fast(&t, doc, strlen(doc)) == MD_OK);
    uint32_t q = md_get(&t, 0, "q"), k = q ? md_get(&t, q, "k") : 0, n = md_get(&t, 0, "n");
    CHECK(k && t.v[k].type == MD_SEQ && t.v[k].n == 3);
    CHECK(n && md_number(&t.v[n]) == -12.0);
    CHECK(k && md_number(&t.v[t.v[t.v[k + 1].next].next]) == 2.5);
    CHECK(md_get(&t, 0, "missing") == 0);
    /* max_nodes bounds the tree */
    md_tree_reset(&t, 3);
    CHECK(md_json_fast(&t, doc, strlen(doc)) != MD_OK);
    md_tree_free(&t);
    printf("%d checks, %d failed; %d of %zu cases took the fast path\n", check_count, check_failures,
           fast_ok, sizeof cases / sizeof *cases);
    return check_failures ? 1 : 0;
}
