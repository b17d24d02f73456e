/* The fast scanners' contract (parsers/md_tree.h), checked on one input:
 * when md_json_fast / md_yaml_fast accept a document, Jansson / libyaml
 * accept it too and their tree is the same, node for node. Shared by
 * test_md_tree and the fuzz_md_tree target. p[n] must be NUL. */
#ifndef TL_MD_AGREE_H
#define TL_MD_AGREE_H

#include <stdlib.h>

#include "parsers/md_tree.h"

/* *fast: the scanner's answer. Returns false when the contract is broken. */
static bool md_agree(bool json, const char *p, size_t n, enum md_rc *fast)
{
    struct md_tree a = {0}, b = {0};
    md_tree_reset(&a, 100000);
    md_tree_reset(&b, 100000);
    *fast = json ? md_json_fast(&a, p, n) : md_yaml_fast(&a, p, n);
    bool ok = true;
    if (*fast == MD_OK && json) {
        size_t len;
        char *fixed = md_json_constants_to_null(p, n, &len);
        json_error_t je;
        json_t *root = fixed ? json_loadb(fixed, len, JSON_REJECT_DUPLICATES, &je) : NULL;
        ok = root && md_from_jansson(&b, root) == MD_OK && md_tree_same(&a, &b);
        json_decref(root);
        free(fixed);
    } else if (*fast == MD_OK) {
        yaml_parser_t yp;
        yaml_document_t d;
        yaml_parser_initialize(&yp);
        yaml_parser_set_input_string(&yp, (const unsigned char *)p, n);
        if (yaml_parser_load(&yp, &d)) {
            ok = md_from_libyaml(&b, &d) == MD_OK && md_tree_same(&a, &b);
            yaml_document_delete(&d);
        } else {
            ok = false;
        }
        yaml_parser_delete(&yp);
    }
    md_tree_free(&a);
    md_tree_free(&b);
    return ok;
}

#endif
