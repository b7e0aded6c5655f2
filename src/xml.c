/* xml.c: the MSCCL XML reader (libxml2, no network, no DTD, no entities) and writer. */
#include "xml.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "fdio.h"
#include "parse.h"

/* Bounds on attribute values. Chunk offsets are int16_t in the runtime; the node limits are
 * generous multiples of the executor's (4096 nodes per rank). */
#define MAX_CHUNK 32768
#define MAX_GPUS 4096
#define MAX_TB_ID (CS_MAX_TBS - 1)
#define MAX_STEP_INDEX 4095
#define MAX_BYTES_ATTR (1LL << 62)

struct reader {
    const char *name; /* file name for messages */
    struct cs_error *err;
    int ngpus;  /* of the <algo> being read */
    int gpu_id; /* of the <gpu> being read */
};

/* Record a failure at line of the file being read and return code. */
#define fail(rd, line, code, ...) cs_error_fail((rd)->err, (code), (rd)->name, (line), __VA_ARGS__)

static int node_line(const xmlNode *node)
{
    long l = xmlGetLineNo(node);

    return l > 0 && l < INT_MAX ? (int)l : 0;
}

/* The index of the first three-character `end` at or after i (or of the last three characters),
 * counting the line ends before it into *line. */
static size_t skip_to(const char *buf, size_t len, size_t i, const char *end, int *line)
{
    for (; i + 2 < len && memcmp(buf + i, end, 3) != 0; i++)
        *line += buf[i] == '\n';
    return i;
}

/* Reject a document type declaration before libxml2 sees it: that is where entities (external
 * ones, and expansion bombs) are declared. Comments and CDATA sections are skipped. */
static int scan_for_dtd(struct reader *rd, const char *buf, size_t len)
{
    int line = 1;

    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\n') {
            line++;
            continue;
        }
        if (buf[i] != '<' || i + 1 >= len || buf[i + 1] != '!')
            continue;
        if (i + 3 < len && buf[i + 2] == '-' && buf[i + 3] == '-') {
            i = skip_to(buf, len, i + 4, "-->", &line);
            continue;
        }
        if (len - i >= 9 && memcmp(buf + i, "<![CDATA[", 9) == 0) {
            i = skip_to(buf, len, i + 9, "]]>", &line);
            continue;
        }
        return fail(rd, line, CS_ERR_PARSE,
                    "document type declarations and entities are not allowed in a schedule");
    }
    return 0;
}

/* The value of a required attribute (xmlFree it); NULL, with err set, when it is missing. */
static xmlChar *get_attr(struct reader *rd, const xmlNode *node, const char *attr)
{
    xmlChar *val = xmlGetProp(node, (const xmlChar *)attr);

    if (val == NULL)
        fail(rd, node_line(node), CS_ERR_INVALID, "<%s>: attribute '%s' is missing",
             (const char *)node->name, attr);
    return val;
}

/* Strict decimal integer in [lo, hi]: digits with an optional '-', nothing else. */
static int get_int(struct reader *rd, const xmlNode *node, const char *attr, long long lo,
                   long long hi, long long *out)
{
    xmlChar *val = get_attr(rd, node, attr);
    const char *s = (const char *)val;
    int rc;

    if (val == NULL)
        return CS_ERR_INVALID;
    rc = s[0] == '+' ? CS_ERR_PARSE : cs_parse_ll(s, lo, hi, out);
    if (rc == CS_ERR_PARSE)
        rc = fail(rd, node_line(node), CS_ERR_INVALID,
                  "<%s>: attribute %s=\"%.40s\" is not an integer", (const char *)node->name, attr,
                  s);
    else if (rc != 0)
        rc = fail(rd, node_line(node), CS_ERR_INVALID,
                  "<%s>: attribute %s=\"%.40s\" is out of range [%lld, %lld]",
                  (const char *)node->name, attr, s, lo, hi);
    xmlFree(val);
    return rc;
}

static int get_int32(struct reader *rd, const xmlNode *node, const char *attr, long long lo,
                     long long hi, int *out)
{
    long long v;
    int rc = get_int(rd, node, attr, lo, hi, &v);

    if (rc == 0)
        *out = (int)v;
    return rc;
}

/* Every attribute of node must be in the NULL-terminated list `allowed`. */
static int check_attrs(struct reader *rd, const xmlNode *node, const char *const *allowed)
{
    for (const xmlAttr *a = node->properties; a != NULL; a = a->next) {
        int ok = 0;

        for (const char *const *k = allowed; *k != NULL; k++)
            if (strcmp((const char *)a->name, *k) == 0)
                ok = 1;
        if (!ok)
            return fail(rd, node_line(node), CS_ERR_INVALID, "<%s>: unknown attribute '%s'",
                        (const char *)node->name, (const char *)a->name);
    }
    return 0;
}

/* Iterate element children, rejecting stray text and any element other than `want`. */
static int check_children(struct reader *rd, const xmlNode *parent, const char *want, int *count)
{
    *count = 0;
    for (const xmlNode *c = parent->children; c != NULL; c = c->next) {
        if (c->type == XML_COMMENT_NODE)
            continue;
        if (c->type == XML_TEXT_NODE) {
            const xmlChar *t = c->content;

            if (t != NULL && strspn((const char *)t, " \t\r\n") != strlen((const char *)t)) {
                /* libxml2 dates a text node where it ends: count from the previous sibling. */
                int line = c->prev ? node_line(c->prev) : node_line(parent);

                for (const xmlChar *p = t; *p && strchr(" \t\r\n", *p); p++)
                    line += *p == '\n';
                return fail(rd, line, CS_ERR_INVALID, "<%s>: unexpected text inside the element",
                            (const char *)parent->name);
            }
            continue;
        }
        if (c->type != XML_ELEMENT_NODE)
            return fail(rd, node_line(c) ? node_line(c) : node_line(parent), CS_ERR_INVALID,
                        "<%s>: unexpected content (only %s%s%scomments are allowed)",
                        (const char *)parent->name, want ? "<" : "", want ? want : "",
                        want ? "> elements and " : "");
        if (want == NULL || strcmp((const char *)c->name, want) != 0)
            return fail(rd, node_line(c), CS_ERR_INVALID, "unexpected element <%s> inside <%s>",
                        (const char *)c->name, (const char *)parent->name);
        (*count)++;
    }
    return 0;
}

/* An optional integer attribute in [0, hi]: when present, sets *has and reads it into *out. */
static int get_opt(struct reader *rd, const xmlNode *node, const char *attr, long long hi, int *has,
                   long long *out)
{
    if (!xmlHasProp(node, (const xmlChar *)attr))
        return 0;
    *has = 1;
    return get_int(rd, node, attr, 0, hi, out);
}

static int get_enum_attr(struct reader *rd, const xmlNode *node, const char *attr, char *buf,
                         size_t len)
{
    xmlChar *val = get_attr(rd, node, attr);

    if (val == NULL)
        return CS_ERR_INVALID;
    snprintf(buf, len, "%s", (const char *)val);
    xmlFree(val);
    return 0;
}

static const char *const step_attrs[] = {"s",   "type",  "srcbuf", "srcoff", "dstbuf", "dstoff",
                                         "cnt", "depid", "deps",   "hasdep", NULL};
static const char *const tb_attrs[] = {"id", "send", "recv", "chan", NULL};
static const char *const gpu_attrs[] = {"id", "i_chunks", "o_chunks", "s_chunks", NULL};
static const char *const algo_attrs[] = {"name",     "proto",    "nchannels", "nchunksperloop",
                                         "ngpus",    "coll",     "inplace",   "outofplace",
                                         "minBytes", "maxBytes", NULL};

/* The rules between a step's attributes: a dependency is both depid and deps; a nop carries one
 * and moves nothing; any other step moves at least one chunk between real offsets. */
static int check_step(struct reader *rd, const struct cs_step *st)
{
    if ((st->depid < 0) != (st->deps < 0))
        return fail(rd, st->line, CS_ERR_INVALID,
                    "<step>: depid=\"%d\" and deps=\"%d\" must both be -1 or both be set",
                    st->depid, st->deps);
    if (st->type == CS_STEP_NOP && st->cnt != 0)
        return fail(rd, st->line, CS_ERR_INVALID, "<step>: a nop must have cnt=\"0\"");
    if (st->type == CS_STEP_NOP && st->depid < 0)
        return fail(rd, st->line, CS_ERR_INVALID,
                    "<step>: a nop carries a dependency, but depid=\"-1\"");
    if (st->type != CS_STEP_NOP && (st->srcoff < 0 || st->dstoff < 0))
        return fail(rd, st->line, CS_ERR_INVALID,
                    "<step>: offset -1 is only allowed on a nop (srcoff=\"%d\" dstoff=\"%d\")",
                    st->srcoff, st->dstoff);
    if (st->type != CS_STEP_NOP && st->cnt < 1)
        return fail(rd, st->line, CS_ERR_INVALID, "<step>: cnt=\"0\" on a %s step",
                    cs_step_type_name(st->type));
    return 0;
}

/* A <step>, appended to the tb `parent`. */
static int read_step(struct reader *rd, const xmlNode *node, void *parent)
{
    struct cs_tb *tb = parent;
    struct cs_step *st = cs_tb_add_step(tb);
    char word[64];
    int rc, n, line = node_line(node);

    if (st == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    st->line = line;
    if ((rc = check_children(rd, node, NULL, &n)) != 0 ||
        (rc = check_attrs(rd, node, step_attrs)) != 0 ||
        (rc = get_int32(rd, node, "s", 0, MAX_STEP_INDEX, &st->s)) != 0)
        return rc;
    if (st->s != tb->nsteps - 1)
        return fail(rd, line, CS_ERR_INVALID, "<step>: s=\"%d\" but this is step %d of its tb",
                    st->s, tb->nsteps - 1);
    if ((rc = get_enum_attr(rd, node, "type", word, sizeof(word))) != 0)
        return rc;
    st->type = cs_step_type_parse(word);
    if (st->type == 0)
        return fail(rd, line, CS_ERR_INVALID,
                    "<step>: unknown step type '%.40s' (expected s, r, rcs, rrc, rrs, rrcs, cpy, "
                    "re or nop)",
                    word);
    if ((rc = get_enum_attr(rd, node, "srcbuf", word, sizeof(word))) != 0)
        return rc;
    if ((st->srcbuf = cs_buf_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<step>: srcbuf=\"%.40s\" is not i, o or s", word);
    if ((rc = get_enum_attr(rd, node, "dstbuf", word, sizeof(word))) != 0)
        return rc;
    if ((st->dstbuf = cs_buf_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<step>: dstbuf=\"%.40s\" is not i, o or s", word);
    if ((rc = get_int32(rd, node, "srcoff", -1, MAX_CHUNK - 1, &st->srcoff)) != 0 ||
        (rc = get_int32(rd, node, "dstoff", -1, MAX_CHUNK - 1, &st->dstoff)) != 0 ||
        (rc = get_int32(rd, node, "cnt", 0, MAX_CHUNK, &st->cnt)) != 0 ||
        (rc = get_int32(rd, node, "depid", -1, MAX_TB_ID, &st->depid)) != 0 ||
        (rc = get_int32(rd, node, "deps", -1, MAX_STEP_INDEX, &st->deps)) != 0 ||
        (rc = get_int32(rd, node, "hasdep", 0, 1, &st->hasdep)) != 0)
        return rc;
    return check_step(rd, st);
}

/* Calls fn(rd, child, parent) for every element child of node (check_children vetted their
 * names), stopping at the first failure. */
static int each_element(struct reader *rd, const xmlNode *node,
                        int (*fn)(struct reader *rd, const xmlNode *child, void *parent),
                        void *parent)
{
    int rc = 0;

    for (const xmlNode *c = node->children; c != NULL && rc == 0; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            rc = fn(rd, c, parent);
    return rc;
}

/* A <tb> and its steps, appended to the gpu `parent`. */
static int read_tb(struct reader *rd, const xmlNode *node, void *parent)
{
    struct cs_tb *tb = cs_gpu_add_tb(parent);
    int rc, n, line = node_line(node), gpu_id = rd->gpu_id, ngpus = rd->ngpus;

    if (tb == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    tb->line = line;
    if ((rc = check_attrs(rd, node, tb_attrs)) != 0 ||
        (rc = get_int32(rd, node, "id", 0, MAX_TB_ID, &tb->id)) != 0 ||
        (rc = get_int32(rd, node, "send", -1, ngpus - 1, &tb->send)) != 0 ||
        (rc = get_int32(rd, node, "recv", -1, ngpus - 1, &tb->recv)) != 0 ||
        (rc = get_int32(rd, node, "chan", 0, CS_MAX_CHANNELS - 1, &tb->chan)) != 0)
        return rc;
    if (tb->send == gpu_id)
        return fail(rd, line, CS_ERR_INVALID, "<tb id=\"%d\">: gpu %d sends to itself", tb->id,
                    gpu_id);
    if (tb->recv == gpu_id)
        return fail(rd, line, CS_ERR_INVALID, "<tb id=\"%d\">: gpu %d receives from itself", tb->id,
                    gpu_id);
    if ((rc = check_children(rd, node, "step", &n)) != 0)
        return rc;
    if (n > MAX_STEP_INDEX + 1)
        return fail(rd, line, CS_ERR_INVALID, "<tb id=\"%d\">: %d steps, more than %d", tb->id, n,
                    MAX_STEP_INDEX + 1);
    return each_element(rd, node, read_step, tb);
}

/* A <gpu> and its tbs, appended to the schedule `parent`. */
static int read_gpu(struct reader *rd, const xmlNode *node, void *parent)
{
    struct cs_gpu *gpu = cs_sched_add_gpu(parent);
    int rc, n, line = node_line(node), ngpus = rd->ngpus;

    if (gpu == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    gpu->line = line;
    if ((rc = check_attrs(rd, node, gpu_attrs)) != 0 ||
        (rc = get_int32(rd, node, "id", 0, ngpus - 1, &gpu->id)) != 0 ||
        (rc = get_int32(rd, node, "i_chunks", 0, MAX_CHUNK, &gpu->i_chunks)) != 0 ||
        (rc = get_int32(rd, node, "o_chunks", 0, MAX_CHUNK, &gpu->o_chunks)) != 0 ||
        (rc = get_int32(rd, node, "s_chunks", 0, MAX_CHUNK, &gpu->s_chunks)) != 0 ||
        (rc = check_children(rd, node, "tb", &n)) != 0)
        return rc;
    if (n > CS_MAX_TBS)
        return fail(rd, line, CS_ERR_INVALID, "<gpu id=\"%d\">: %d threadblocks, more than %d",
                    gpu->id, n, CS_MAX_TBS);
    rd->gpu_id = gpu->id;
    return each_element(rd, node, read_tb, gpu);
}

static int read_algo(struct reader *rd, const xmlNode *node, struct cs_sched *sched)
{
    char word[256];
    xmlChar *name;
    long long oop = 0;
    int rc, n, line = node_line(node);

    sched->line = line;
    if ((rc = check_attrs(rd, node, algo_attrs)) != 0)
        return rc;
    if ((name = get_attr(rd, node, "name")) == NULL)
        return CS_ERR_INVALID;
    rc = cs_sched_set_name(sched, (const char *)name);
    xmlFree(name);
    if (rc != 0)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    if ((rc = get_enum_attr(rd, node, "proto", word, sizeof(word))) != 0)
        return rc;
    if ((sched->proto = cs_proto_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<algo>: proto=\"%.40s\" is not LL, LL128 or Simple",
                    word);
    if ((rc = get_enum_attr(rd, node, "coll", word, sizeof(word))) != 0)
        return rc;
    if ((sched->coll = cs_coll_parse(word, &sched->coll_exec_spelling)) == 0)
        return fail(rd, line, CS_ERR_INVALID,
                    "<algo>: coll=\"%.40s\" is not allreduce, allgather, reduce_scatter, "
                    "reducescatter, alltoall or custom",
                    word);
    if ((rc = get_int32(rd, node, "nchannels", 1, CS_MAX_CHANNELS, &sched->nchannels)) != 0 ||
        (rc = get_int32(rd, node, "nchunksperloop", 1, MAX_CHUNK, &sched->nchunksperloop)) != 0 ||
        (rc = get_int32(rd, node, "ngpus", 1, MAX_GPUS, &sched->ngpus)) != 0 ||
        (rc = get_int32(rd, node, "inplace", 0, 1, &sched->inplace)) != 0)
        return rc;
    if ((rc = get_opt(rd, node, "outofplace", 1, &sched->has_outofplace, &oop)) != 0 ||
        (rc = get_opt(rd, node, "minBytes", MAX_BYTES_ATTR, &sched->has_min_bytes,
                      &sched->min_bytes)) != 0 ||
        (rc = get_opt(rd, node, "maxBytes", MAX_BYTES_ATTR, &sched->has_max_bytes,
                      &sched->max_bytes)) != 0 ||
        (rc = check_children(rd, node, "gpu", &n)) != 0)
        return rc;
    sched->outofplace = (int)oop;
    if (n != sched->ngpus)
        return fail(rd, line, CS_ERR_INVALID, "<algo>: ngpus=\"%d\" but %d <gpu> elements",
                    sched->ngpus, n);
    rd->ngpus = sched->ngpus;
    return each_element(rd, node, read_gpu, sched);
}

/* Ids unique and dense, dependencies name existing steps. */
static int check_refs(struct reader *rd, const struct cs_sched *sched)
{
    char seen[MAX_GPUS > CS_MAX_TBS ? MAX_GPUS : CS_MAX_TBS] = {0};

    for (int g = 0; g < sched->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        if (seen[gpu->id])
            return fail(rd, gpu->line, CS_ERR_INVALID, "<gpu>: duplicate id=\"%d\"", gpu->id);
        seen[gpu->id] = 1;
    }
    for (int g = 0; g < sched->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        memset(seen, 0, CS_MAX_TBS);
        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            if (tb->id >= gpu->ntbs)
                return fail(rd, tb->line, CS_ERR_INVALID,
                            "<tb>: id=\"%d\" on gpu %d, but tb ids must be 0..%d (dense)", tb->id,
                            gpu->id, gpu->ntbs - 1);
            if (seen[tb->id])
                return fail(rd, tb->line, CS_ERR_INVALID, "<tb>: duplicate id=\"%d\" on gpu %d",
                            tb->id, gpu->id);
            seen[tb->id] = 1;
        }
        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            for (int i = 0; i < tb->nsteps; i++) {
                const struct cs_step *st = &tb->steps[i];
                const struct cs_tb *dep = st->depid < 0 ? NULL : cs_gpu_find_tb(gpu, st->depid);

                if (st->depid >= 0 && (dep == NULL || st->deps >= dep->nsteps))
                    return fail(rd, st->line, CS_ERR_INVALID,
                                "gpu %d tb %d step %d: depends on tb %d step %d, which does not "
                                "exist",
                                gpu->id, tb->id, st->s, st->depid, st->deps);
            }
        }
    }
    return 0;
}

/* libxml2's message for a document that is not well-formed, without its trailing newline. */
static int malformed(struct reader *rd, xmlParserCtxtPtr ctxt)
{
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    const char *msg = e && e->message ? e->message : "malformed XML";
    int n = (int)strlen(msg);

    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    return fail(rd, e ? e->line : 0, CS_ERR_PARSE, "malformed XML: %.*s", n, msg);
}

int cs_sched_read_xml_mem(const char *buf, size_t len, const char *name, struct cs_sched **out,
                          struct cs_error *err)
{
    struct reader rd = {name ? name : "<memory>", err, 0, 0};
    xmlParserCtxtPtr ctxt;
    xmlDocPtr doc;
    xmlNodePtr root;
    struct cs_sched *sched = NULL;
    int rc;

    if (len > (size_t)CS_XML_MAX_BYTES)
        return fail(&rd, 0, CS_ERR_INVALID, "file is larger than %ld bytes", CS_XML_MAX_BYTES);
    if ((rc = scan_for_dtd(&rd, buf, len)) != 0)
        return rc;
    ctxt = xmlNewParserCtxt();
    if (ctxt == NULL)
        return fail(&rd, 0, CS_ERR_NOMEM, "out of memory");
    /* No NOENT (no substitution), no DTDLOAD/DTDATTR, no HUGE (keeps libxml2's depth and size
     * limits), no network. */
    doc = xmlCtxtReadMemory(ctxt, buf, (int)len, rd.name, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                XML_PARSE_BIG_LINES);
    root = doc != NULL && ctxt->wellFormed ? xmlDocGetRootElement(doc) : NULL;
    if (doc == NULL || !ctxt->wellFormed)
        rc = malformed(&rd, ctxt);
    else if (root == NULL || strcmp((const char *)root->name, "algo") != 0)
        rc = fail(&rd, root ? node_line(root) : 0, CS_ERR_INVALID,
                  "the root element must be <algo>%s%s%s", root ? ", not <" : "",
                  root ? (const char *)root->name : "", root ? ">" : "");
    else if ((sched = cs_sched_new()) == NULL)
        rc = fail(&rd, 0, CS_ERR_NOMEM, "out of memory");
    else if ((rc = read_algo(&rd, root, sched)) == 0 && (rc = check_refs(&rd, sched)) == 0 &&
             name != NULL && (sched->path = strdup(name)) == NULL)
        rc = fail(&rd, 0, CS_ERR_NOMEM, "out of memory");
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    if (rc == 0)
        *out = sched;
    else
        cs_sched_free(sched);
    return rc;
}

int cs_sched_read_xml(const char *path, struct cs_sched **out, struct cs_error *err)
{
    char *buf;
    size_t len;
    int rc = cs_file_read(path, CS_XML_MAX_BYTES, &buf, &len, err);

    if (rc != 0)
        return rc;
    rc = cs_sched_read_xml_mem(buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, out, err);
    free(buf);
    return rc;
}

/* Write s with XML escaping for an attribute value. */
static void put_escaped(FILE *fp, const char *s)
{
    static const char *const entity[256] = {
        ['&'] = "&amp;",  ['<'] = "&lt;",   ['>'] = "&gt;",   ['"'] = "&quot;",
        ['\n'] = "&#10;", ['\t'] = "&#09;", ['\r'] = "&#13;",
    };

    for (; *s; s++) {
        const char *e = entity[(unsigned char)*s];

        if (e != NULL)
            fputs(e, fp);
        else
            fputc(*s, fp);
    }
}

int cs_sched_write_xml(const struct cs_sched *sched, FILE *fp)
{
    const char *coll = sched->coll == CS_COLL_REDUCE_SCATTER && sched->coll_exec_spelling
                           ? "reducescatter"
                           : cs_coll_name(sched->coll);

    fputs("<algo name=\"", fp);
    put_escaped(fp, sched->name ? sched->name : "");
    fprintf(fp,
            "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"%s\" "
            "inplace=\"%d\"",
            cs_proto_name(sched->proto), sched->nchannels, sched->nchunksperloop, sched->ngpus,
            coll, sched->inplace);
    if (sched->has_outofplace)
        fprintf(fp, " outofplace=\"%d\"", sched->outofplace);
    if (sched->has_min_bytes)
        fprintf(fp, " minBytes=\"%lld\"", sched->min_bytes);
    if (sched->has_max_bytes)
        fprintf(fp, " maxBytes=\"%lld\"", sched->max_bytes);
    fputs(sched->ngpus_alloc > 0 ? ">\n" : "/>\n", fp);
    for (int g = 0; g < sched->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        fprintf(fp, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\"%s\n", gpu->id,
                gpu->i_chunks, gpu->o_chunks, gpu->s_chunks, gpu->ntbs ? ">" : "/>");
        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            fprintf(fp, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\"%s\n", tb->id,
                    tb->send, tb->recv, tb->chan, tb->nsteps ? ">" : "/>");
            for (int i = 0; i < tb->nsteps; i++) {
                const struct cs_step *st = &tb->steps[i];

                fprintf(fp,
                        "      <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%d\" "
                        "dstbuf=\"%c\" dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" "
                        "hasdep=\"%d\"/>\n",
                        st->s, cs_step_type_name(st->type), cs_buf_char(st->srcbuf), st->srcoff,
                        cs_buf_char(st->dstbuf), st->dstoff, st->cnt, st->depid, st->deps,
                        st->hasdep);
            }
            if (tb->nsteps)
                fputs("    </tb>\n", fp);
        }
        if (gpu->ntbs)
            fputs("  </gpu>\n", fp);
    }
    if (sched->ngpus_alloc > 0)
        fputs("</algo>\n", fp);
    return ferror(fp) ? CS_ERR_IO : 0;
}

int cs_sched_write_xml_file(const struct cs_sched *sched, const char *path, struct cs_error *err)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *fp = to_stdout ? stdout : fopen(path, "w");
    int rc;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, path, 0, "cannot create: %s", strerror(errno));
    rc = cs_sched_write_xml(sched, fp);
    if (to_stdout)
        rc = fflush(fp) != 0 ? CS_ERR_IO : rc;
    else if (fclose(fp) != 0)
        rc = CS_ERR_IO;
    if (rc != 0)
        cs_error_set(err, to_stdout ? "<stdout>" : path, 0, "write error");
    return rc;
}
