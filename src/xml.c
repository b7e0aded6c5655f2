/* xml.c: the MSCCL XML reader (libxml2's SAX2 stream: no tree, no network, no DTD, no entities)
 * and writer. */
#include "xml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "fdio.h"
#include "parse.h"

/* Bounds on attribute values: what the model can hold, not what a runtime accepts (verify checks
 * that). Chunk offsets are int16_t in the runtime, and so are channels, tb ids and dependencies
 * here; the node limits are generous multiples of the executor's (4096 nodes per rank). */
#define MAX_CHUNK 32768
#define MAX_GPUS 4096
#define MAX_ID (MAX_CHUNK - 1)
#define MAX_STEP_INDEX 4095
#define MAX_BYTES_ATTR (1LL << 62)

/* Attributes in one start tag: a schedule needs at most 10, and libxml2 checks them for
 * duplicates pairwise (400,000 in one tag: minutes). */

/* Element depth of a schedule: <algo> is 1, <gpu> 2, <tb> 3, <step> 4. */
#define DEPTH_STEP 4

/* An element as the parser reports its start: SAX2 attributes are five pointers each (local name,
 * prefix, URI, value, end of value); values are not NUL-terminated. */
struct elem {
    const char *name;
    int line;
    int nattrs;
    const xmlChar **attrs;
};

/* What is known of an open element while its children stream past. */
struct level {
    const char *name;
    int line;      /* of its start tag */
    int last_line; /* of its last child element or comment, else its own */
    int text_nl;   /* line ends in the blank text after last_line */
};

struct reader {
    const char *name; /* file name for messages */
    struct cs_error *err;
    xmlParserCtxtPtr ctxt;
    struct cs_sched *sched;
    int rc;          /* the first failure: the rest of the document is only checked for syntax */
    int refused;     /* a DTD was refused and the parser stopped there */
    int crowded;     /* a start tag with over CS_XML_MAX_ATTRS attributes: its input was cut off */
    const char *buf; /* the input in memory, fed to the parser from pos as it asks */
    size_t len, pos;
    FILE *fp;                /* else the input stream, fed as the parser asks */
    size_t nread, max_bytes; /* bytes read from fp, and the most it may give */
    int io_errno;            /* fp's read error, 0 if none */
    int too_big;             /* fp gave more than max_bytes */
    void (*tap)(void *ctx, const char *piece, size_t n); /* sees every piece fed, or NULL */
    void *tap_ctx;
    int depth; /* open elements */
    struct level lv[DEPTH_STEP + 1];
    struct cs_error first; /* the message of rc, reported unless the XML is malformed */
};

/* Record a failure at line of the file being read and return code. */
#define fail(rd, line, code, ...)                                                                  \
    cs_error_fail(&(rd)->first, (code), (rd)->name, (line), __VA_ARGS__)

/* The parser's line: SAX2 dates a node there, as the tree builder does. */
static int cur_line(const struct reader *rd)
{
    int l = xmlSAX2GetLineNumber(rd->ctxt);

    return l > 0 ? l : 0;
}

/* A SAX2 attribute's value (from v up to end) as a new NUL-terminated string, or NULL when out
 * of memory. The parser keeps '&' as "&#38;" when it does not substitute entities: that is
 * decoded here (every other reference is already replaced). */
static char *decode_value(const xmlChar *v, const xmlChar *end)
{
    size_t len = (size_t)(end - v), n = 0;
    char *out = malloc(len + 1);

    if (out == NULL)
        return NULL;
    for (size_t k = 0; k < len; k++) {
        out[n++] = (char)v[k];
        if (v[k] == '&' && len - k >= 5 && memcmp(v + k, "&#38;", 5) == 0)
            k += 4;
    }
    out[n] = '\0';
    return out;
}

/* The value of attribute attr of el, or NULL. */
static char *attr_value(const struct elem *el, const char *attr, int *nomem)
{
    for (int i = 0; i < el->nattrs; i++) {
        const xmlChar **a = el->attrs + 5 * i;
        char *v;

        /* the first letter first: a step's ten attributes are looked up one by one */
        if (a[1] != NULL || a[0][0] != (xmlChar)attr[0] || strcmp((const char *)a[0], attr) != 0)
            continue;
        if ((v = decode_value(a[3], a[4])) == NULL)
            *nomem = 1;
        return v;
    }
    return NULL;
}

/* The value of a required attribute into *val (free it): 0, or the failure, recorded, when it is
 * missing. */
static int get_attr(struct reader *rd, const struct elem *el, const char *attr, char **val)
{
    int nomem = 0;

    if ((*val = attr_value(el, attr, &nomem)) != NULL)
        return 0;
    if (nomem)
        return fail(rd, el->line, CS_ERR_NOMEM, "out of memory");
    return fail(rd, el->line, CS_ERR_INVALID, "<%s>: attribute '%s' is missing", el->name, attr);
}

/* Strict decimal integer in [lo, hi]: digits with an optional '-', nothing else. */
static int get_int(struct reader *rd, const struct elem *el, const char *attr, long long lo,
                   long long hi, long long *out)
{
    char *s;
    int rc = get_attr(rd, el, attr, &s);

    if (rc != 0)
        return rc;
    rc = s[0] == '+' ? CS_ERR_PARSE : cs_parse_ll(s, lo, hi, out);
    if (rc == CS_ERR_PARSE)
        rc = fail(rd, el->line, CS_ERR_INVALID, "<%s>: attribute %s=\"%.40s\" is not an integer",
                  el->name, attr, s);
    else if (rc != 0)
        rc = fail(rd, el->line, CS_ERR_INVALID,
                  "<%s>: attribute %s=\"%.40s\" is out of range [%lld, %lld]", el->name, attr, s,
                  lo, hi);
    free(s);
    return rc;
}

static int get_int32(struct reader *rd, const struct elem *el, const char *attr, long long lo,
                     long long hi, int *out)
{
    long long v;
    int rc = get_int(rd, el, attr, lo, hi, &v);

    if (rc == 0)
        *out = (int)v;
    return rc;
}

/* An attribute of el that is not in the NULL-terminated list `allowed` is a warning: the runtimes
 * look up the attributes they need and ignore the rest (the legacy runtime reads nthreads). */
static int check_attrs(struct reader *rd, const struct elem *el, const char *const *allowed)
{
    for (int i = 0; i < el->nattrs; i++) {
        const char *name = (const char *)el->attrs[5 * i];
        int ok = 0;

        for (const char *const *k = allowed; *k != NULL && !ok; k++)
            ok = name[0] == (*k)[0] && strcmp(name, *k) == 0;
        if (!ok && cs_sched_add_warning(rd->sched, el->line,
                                        "<%s>: unknown attribute '%.64s' (ignored: the runtimes "
                                        "look up the attributes they use)",
                                        el->name, name) != 0)
            return fail(rd, el->line, CS_ERR_NOMEM, "out of memory");
    }
    return 0;
}

/* An optional integer attribute in [0, hi]: when present, sets *has and reads it into *out. */
static int get_opt(struct reader *rd, const struct elem *el, const char *attr, long long hi,
                   int *has, long long *out)
{
    int nomem = 0;
    char *val = attr_value(el, attr, &nomem);

    if (nomem)
        return fail(rd, el->line, CS_ERR_NOMEM, "out of memory");
    if (val == NULL)
        return 0;
    free(val);
    *has = 1;
    return get_int(rd, el, attr, 0, hi, out);
}

static int get_enum_attr(struct reader *rd, const struct elem *el, const char *attr, char *buf,
                         size_t len)
{
    char *val;
    int rc = get_attr(rd, el, attr, &val);

    if (rc != 0)
        return rc;
    snprintf(buf, len, "%s", val);
    free(val);
    return 0;
}

static const char *const step_attrs[] = {"s",   "type",  "srcbuf", "srcoff", "dstbuf", "dstoff",
                                         "cnt", "depid", "deps",   "hasdep", NULL};
static const char *const tb_attrs[] = {"id", "send", "recv", "chan", NULL};
static const char *const gpu_attrs[] = {"id", "i_chunks", "o_chunks", "s_chunks", NULL};
static const char *const algo_attrs[] = {"name",     "proto",    "nchannels", "nchunksperloop",
                                         "ngpus",    "coll",     "inplace",   "outofplace",
                                         "minBytes", "maxBytes", NULL};

/* The last tb of the last gpu read: where the steps being read go. */
static struct cs_tb *cur_tb(struct reader *rd)
{
    struct cs_gpu *gpu = &rd->sched->gpus[rd->sched->ngpus_alloc - 1];

    return &gpu->tbs[gpu->ntbs - 1];
}

/* A <step>, appended to the current tb. */
static int read_step(struct reader *rd, const struct elem *el)
{
    struct cs_tb *tb = cur_tb(rd);
    struct cs_step *st = cs_tb_add_step(tb);
    char word[64];
    int rc, hasdep, line = el->line;

    if (st == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    st->line = line;
    if ((rc = check_attrs(rd, el, step_attrs)) != 0 ||
        (rc = get_int32(rd, el, "s", 0, MAX_STEP_INDEX, &st->s)) != 0)
        return rc;
    if ((rc = get_enum_attr(rd, el, "type", word, sizeof(word))) != 0)
        return rc;
    st->type = cs_step_type_parse(word);
    if (st->type == 0)
        return fail(rd, line, CS_ERR_INVALID,
                    "<step>: unknown step type '%.40s' (expected s, r, rcs, rrc, rrs, rrcs, cpy, "
                    "re or nop)",
                    word);
    if ((rc = get_enum_attr(rd, el, "srcbuf", word, sizeof(word))) != 0)
        return rc;
    if ((st->srcbuf = cs_buf_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<step>: srcbuf=\"%.40s\" is not i, o or s", word);
    if ((rc = get_enum_attr(rd, el, "dstbuf", word, sizeof(word))) != 0)
        return rc;
    if ((st->dstbuf = cs_buf_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<step>: dstbuf=\"%.40s\" is not i, o or s", word);
    if ((rc = get_int32(rd, el, "srcoff", -1, MAX_CHUNK - 1, &st->srcoff)) != 0 ||
        (rc = get_int32(rd, el, "dstoff", -1, MAX_CHUNK - 1, &st->dstoff)) != 0 ||
        (rc = get_int32(rd, el, "cnt", 0, MAX_CHUNK, &st->cnt)) != 0 ||
        (rc = get_int32(rd, el, "depid", -1, MAX_ID, &st->depid)) != 0 ||
        (rc = get_int32(rd, el, "deps", -1, MAX_STEP_INDEX, &st->deps)) != 0 ||
        (rc = get_int32(rd, el, "hasdep", 0, 1, &hasdep)) != 0)
        return rc;
    st->hasdep = (unsigned)hasdep;
    return 0;
}

/* A <tb>, appended to the current gpu; its steps follow. */
static int read_tb(struct reader *rd, const struct elem *el)
{
    struct cs_gpu *gpu = &rd->sched->gpus[rd->sched->ngpus_alloc - 1];
    struct cs_tb *tb;
    int rc, line = el->line;

    if ((tb = cs_gpu_add_tb(gpu)) == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    tb->line = line;
    if ((rc = check_attrs(rd, el, tb_attrs)) != 0 ||
        (rc = get_int32(rd, el, "id", 0, MAX_ID, &tb->id)) != 0 ||
        (rc = get_int32(rd, el, "send", -1, MAX_GPUS - 1, &tb->send)) != 0 ||
        (rc = get_int32(rd, el, "recv", -1, MAX_GPUS - 1, &tb->recv)) != 0 ||
        (rc = get_int32(rd, el, "chan", 0, MAX_ID, &tb->chan)) != 0)
        return rc;
    return 0;
}

/* A <gpu>, appended to the schedule; its tbs follow. */
static int read_gpu(struct reader *rd, const struct elem *el)
{
    struct cs_gpu *gpu = cs_sched_add_gpu(rd->sched);
    int rc, line = el->line;

    if (gpu == NULL)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    gpu->line = line;
    if ((rc = check_attrs(rd, el, gpu_attrs)) != 0 ||
        (rc = get_int32(rd, el, "id", 0, MAX_GPUS - 1, &gpu->id)) != 0 ||
        (rc = get_int32(rd, el, "i_chunks", 0, MAX_CHUNK, &gpu->i_chunks)) != 0 ||
        (rc = get_int32(rd, el, "o_chunks", 0, MAX_CHUNK, &gpu->o_chunks)) != 0 ||
        (rc = get_int32(rd, el, "s_chunks", 0, MAX_CHUNK, &gpu->s_chunks)) != 0)
        return rc;
    return 0;
}

/* The <algo> start tag; its gpus follow. */
static int read_algo(struct reader *rd, const struct elem *el)
{
    struct cs_sched *sched = rd->sched;
    char word[256], *name;
    long long oop = 0;
    int rc, line = el->line;

    sched->line = line;
    if ((rc = check_attrs(rd, el, algo_attrs)) != 0)
        return rc;
    if ((rc = get_attr(rd, el, "name", &name)) != 0)
        return rc;
    rc = cs_sched_set_name(sched, name);
    free(name);
    if (rc != 0)
        return fail(rd, line, CS_ERR_NOMEM, "out of memory");
    if ((rc = get_enum_attr(rd, el, "proto", word, sizeof(word))) != 0)
        return rc;
    if ((sched->proto = cs_proto_parse(word)) == 0)
        return fail(rd, line, CS_ERR_INVALID, "<algo>: proto=\"%.40s\" is not LL, LL128 or Simple",
                    word);
    if ((rc = get_enum_attr(rd, el, "coll", word, sizeof(word))) != 0)
        return rc;
    if ((sched->coll = cs_coll_parse(word, &sched->coll_exec_spelling)) == 0)
        return fail(rd, line, CS_ERR_INVALID,
                    "<algo>: coll=\"%.40s\" is not allreduce, allgather, reduce_scatter, "
                    "reducescatter, alltoall or custom",
                    word);
    if ((rc = get_int32(rd, el, "nchannels", 1, MAX_ID + 1, &sched->nchannels)) != 0 ||
        (rc = get_int32(rd, el, "nchunksperloop", 1, MAX_CHUNK, &sched->nchunksperloop)) != 0 ||
        (rc = get_int32(rd, el, "ngpus", 1, MAX_GPUS, &sched->ngpus)) != 0 ||
        (rc = get_int32(rd, el, "inplace", 0, 1, &sched->inplace)) != 0)
        return rc;
    if ((rc = get_opt(rd, el, "outofplace", 1, &sched->has_outofplace, &oop)) != 0 ||
        (rc = get_opt(rd, el, "minBytes", MAX_BYTES_ATTR, &sched->has_min_bytes,
                      &sched->min_bytes)) != 0 ||
        (rc = get_opt(rd, el, "maxBytes", MAX_BYTES_ATTR, &sched->has_max_bytes,
                      &sched->max_bytes)) != 0)
        return rc;
    sched->outofplace = (int)oop;
    return 0;
}

/* The child each level holds: <algo> holds <gpu>s, ..., a <step> holds nothing. */
static const char *const child_name[DEPTH_STEP + 1] = {"algo", "gpu", "tb", "step", NULL};

/* SAX2: an element starts. The tree-walking reader's checks, in document order. */
static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes,
                     int nb_defaulted, const xmlChar **attributes)
{
    struct reader *rd = ctx;
    struct elem el = {(const char *)localname, cur_line(rd), nb_attributes, attributes};
    const char *want = child_name[rd->depth];
    static int (*const read[DEPTH_STEP])(struct reader *, const struct elem *) = {
        read_algo, read_gpu, read_tb, read_step};
    struct level *parent = &rd->lv[rd->depth];

    (void)prefix, (void)uri, (void)nb_namespaces, (void)namespaces, (void)nb_defaulted;
    if (rd->rc != 0)
        return;
    if (rd->depth == 0 && strcmp(el.name, "algo") != 0) {
        rd->rc =
            fail(rd, el.line, CS_ERR_INVALID, "the root element must be <algo>, not <%s>", el.name);
        return;
    }
    if (want == NULL || strcmp(el.name, want) != 0) {
        rd->rc = fail(rd, el.line, CS_ERR_INVALID, "unexpected element <%s> inside <%s>", el.name,
                      parent->name);
        return;
    }
    parent->last_line = el.line;
    parent->text_nl = 0;
    if ((rd->rc = read[rd->depth](rd, &el)) != 0)
        return;
    rd->depth++;
    rd->lv[rd->depth] = (struct level){child_name[rd->depth - 1], el.line, el.line, 0};
}

/* SAX2: an element ends. */
static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
    struct reader *rd = ctx;

    (void)localname, (void)prefix, (void)uri;
    if (rd->rc != 0)
        return;
    if (rd->depth == DEPTH_STEP - 1) /* a </tb>: its steps are all read */
        cs_tb_shrink(cur_tb(rd));
    rd->depth--;
    rd->lv[rd->depth].text_nl = 0;
}

/* SAX2: text, perhaps in pieces. Only blanks between elements; text that is not is dated, as
 * libxml2's tree would date it, from the previous sibling plus the line ends before it. */
static void on_text(void *ctx, const xmlChar *ch, int len)
{
    struct reader *rd = ctx;
    struct level *l = &rd->lv[rd->depth];

    if (rd->rc != 0 || rd->depth == 0)
        return;
    for (int i = 0; i < len; i++) {
        if (ch[i] == '\n')
            l->text_nl++;
        else if (ch[i] != ' ' && ch[i] != '\t' && ch[i] != '\r') {
            rd->rc = fail(rd, l->last_line + l->text_nl, CS_ERR_INVALID,
                          "<%s>: unexpected text inside the element", l->name);
            return;
        }
    }
}

/* Anything but elements, blanks and comments inside the root (CDATA, a processing instruction)
 * is refused at line (0: the element's own). */
static void unexpected(struct reader *rd, int line)
{
    const struct level *l = &rd->lv[rd->depth];
    const char *want = child_name[rd->depth];

    if (rd->rc != 0 || rd->depth == 0)
        return;
    rd->rc = fail(rd, line ? line : l->line, CS_ERR_INVALID,
                  "<%s>: unexpected content (only %s%s%scomments are allowed)", l->name,
                  want ? "<" : "", want ? want : "", want ? "> elements and " : "");
}

static void on_cdata(void *ctx, const xmlChar *value, int len)
{
    (void)value, (void)len;
    unexpected(ctx, 0);
}

static void on_pi(void *ctx, const xmlChar *target, const xmlChar *data)
{
    struct reader *rd = ctx;

    (void)target, (void)data;
    unexpected(rd, cur_line(rd));
}

static void on_comment(void *ctx, const xmlChar *value)
{
    struct reader *rd = ctx;
    struct level *l = &rd->lv[rd->depth];

    (void)value;
    l->last_line = cur_line(rd);
    l->text_nl = 0;
}

/* SAX2: <!DOCTYPE, reported before any internal subset is parsed. A DTD is where entities (external
 * ones, expansion bombs) are declared, whatever the file's encoding: the parser stops here. */
static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                       const xmlChar *system_id)
{
    struct reader *rd = ctx;

    (void)name, (void)external_id, (void)system_id;
    if (rd->rc == 0)
        rd->rc = fail(rd, cur_line(rd), CS_ERR_PARSE,
                      "document type declarations and entities are not allowed in a schedule");
    rd->refused = 1;
    xmlStopParser(rd->ctxt);
}

int cs_xml_stopped_at_nul(const void *parser_ctxt)
{
    const xmlParserInput *in = ((const xmlParserCtxt *)parser_ctxt)->input;

    return in != NULL && in->cur != NULL && in->cur < in->end && *in->cur == '\0';
}

/* libxml2's message for a document that is not well-formed, without its trailing newline. */
static int malformed(xmlParserCtxtPtr ctxt, const char *name, struct cs_error *err)
{
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    const char *msg = e && e->message ? e->message : "malformed XML";
    int n = (int)strlen(msg);

    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    return cs_error_fail(err, CS_ERR_PARSE, name, e ? e->line : 0, "malformed XML: %.*s", n, msg);
}

/* The parser's read callback: the next piece of the input. The parser asks for more as it goes,
 * inside a start tag too, which is where a tag with too many attributes is cut off (an I/O error
 * for the parser). */
static int feed(void *ctx, char *out, int len)
{
    struct reader *rd = ctx;
    int n;

    if (rd->ctxt != NULL && rd->ctxt->maxatts > 5 * CS_XML_MAX_ATTRS) {
        if (rd->rc == 0)
            rd->rc =
                fail(rd, cur_line(rd), CS_ERR_PARSE,
                     "malformed XML: a start tag with more than %d attributes", CS_XML_MAX_ATTRS);
        rd->crowded = 1;
        return -1;
    }
    if (rd->fp == NULL) {
        n = cs_xml_feed(rd->buf, rd->len, &rd->pos, out, len);
    } else {
        size_t got = fread(out, 1, (size_t)len, rd->fp);

        if (got == 0 && ferror(rd->fp)) {
            rd->io_errno = errno ? errno : EIO;
            return -1;
        }
        rd->nread += got;
        if (rd->nread > rd->max_bytes) {
            rd->too_big = 1;
            return -1;
        }
        n = (int)got;
    }
    if (rd->tap != NULL && n > 0)
        rd->tap(rd->tap_ctx, out, (size_t)n);
    return n;
}

int cs_xml_feed(const char *buf, size_t buflen, size_t *pos, char *out, int len)
{
    size_t n = buflen - *pos;

    if (n > (size_t)len)
        n = (size_t)len;
    memcpy(out, buf + *pos, n);
    *pos += n;
    return (int)n;
}

/* Parse the input with the SAX2 handlers above. The options: no NOENT (no substitution), no
 * DTDLOAD/DTDATTR/DTDVALID, no XINCLUDE, no HUGE (keeps libxml2's depth, name and text limits),
 * no network. Returns the reader's verdict. */
/* libxml2 prints some diagnostics (encoding errors) straight to stderr, whatever the parser's
 * options; the readers report every problem themselves, with file and line. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx, (void)msg;
}

void cs_xml_quiet(void)
{
    xmlSetGenericErrorFunc(NULL, quiet);
}

static int parse(struct reader *rd)
{
    xmlSAXHandler sax;
    int rc;

    cs_xml_quiet();
    memset(&sax, 0, sizeof(sax));
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_text;
    sax.ignorableWhitespace = on_text;
    sax.cdataBlock = on_cdata;
    sax.processingInstruction = on_pi;
    sax.comment = on_comment;
    sax.internalSubset = on_doctype;
    rd->ctxt = xmlCreateIOParserCtxt(&sax, rd, feed, NULL, rd, XML_CHAR_ENCODING_NONE);
    if (rd->ctxt == NULL)
        return cs_error_fail(rd->err, CS_ERR_NOMEM, rd->name, 0, "out of memory");
    xmlCtxtUseOptions(rd->ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                    XML_PARSE_BIG_LINES);
    errno = 0;
    xmlParseDocument(rd->ctxt);
    if (rd->io_errno != 0)
        rc = cs_error_fail(rd->err, CS_ERR_IO, rd->name, 0, "read error: %s",
                           strerror(rd->io_errno));
    else if (rd->too_big)
        rc = cs_error_fail(rd->err, CS_ERR_INVALID, rd->name, 0, "file is larger than %zu bytes",
                           rd->max_bytes);
    else if (rd->refused || rd->crowded)
        rc = cs_error_fail(rd->err, rd->rc, rd->first.file, rd->first.line, "%s", rd->first.msg);
    else if (cs_xml_stopped_at_nul(rd->ctxt))
        rc = cs_error_fail(rd->err, CS_ERR_PARSE, rd->name, rd->ctxt->input->line,
                           "malformed XML: a NUL byte, which XML does not allow (the text "
                           "after it would be ignored)");
    else if (!rd->ctxt->wellFormed)
        rc = malformed(rd->ctxt, rd->name, rd->err);
    else if (rd->rc != 0)
        rc = cs_error_fail(rd->err, rd->rc, rd->first.file, rd->first.line, "%s", rd->first.msg);
    else
        rc = 0;
    /* libxml2 builds a document of its own for entity declarations even in SAX mode (its "SAX
     * compatibility"); the context does not free it. */
    if (rd->ctxt->myDoc != NULL)
        xmlFreeDoc(rd->ctxt->myDoc);
    xmlFreeParserCtxt(rd->ctxt);
    rd->ctxt = NULL;
    return rc;
}

/* Parse rd's input (set by the caller) into a new schedule in *out. */
static int read_into(struct reader *rd, const char *name, struct cs_sched **out,
                     struct cs_error *err)
{
    int rc;

    rd->name = name ? name : "<memory>";
    rd->err = err;
    rd->lv[0].name = "document";
    cs_error_init(&rd->first);
    if ((rd->sched = cs_sched_new()) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, rd->name, 0, "out of memory");
    rc = parse(rd);
    if (rc == 0 && name != NULL && (rd->sched->path = strdup(name)) == NULL)
        rc = cs_error_fail(err, CS_ERR_NOMEM, rd->name, 0, "out of memory");
    if (rc == 0) {
        cs_sched_shrink(rd->sched);
        *out = rd->sched;
    } else {
        cs_sched_free(rd->sched);
    }
    return rc;
}

int cs_sched_read_xml_mem(const char *buf, size_t len, const char *name, struct cs_sched **out,
                          struct cs_error *err)
{
    struct reader rd;

    memset(&rd, 0, sizeof(rd));
    if (len > (size_t)CS_SCHED_MAX_BYTES)
        return cs_error_fail(err, CS_ERR_INVALID, name ? name : "<memory>", 0,
                             "file is larger than %ld bytes", CS_SCHED_MAX_BYTES);
    rd.buf = buf;
    rd.len = len;
    return read_into(&rd, name, out, err);
}

int cs_sched_read_xml_stream(FILE *fp, const char *name, long max_bytes,
                             void (*tap)(void *ctx, const char *piece, size_t n), void *ctx,
                             struct cs_sched **out, struct cs_error *err)
{
    struct reader rd;

    memset(&rd, 0, sizeof(rd));
    rd.fp = fp;
    rd.max_bytes = max_bytes < 0 ? 0 : (size_t)max_bytes;
    rd.tap = tap;
    rd.tap_ctx = ctx;
    return read_into(&rd, name, out, err);
}

int cs_sched_read_xml_tap(const char *path, void (*tap)(void *ctx, const char *piece, size_t n),
                          void *ctx, struct cs_sched **out, struct cs_error *err)
{
    int is_stdin = strcmp(path, "-") == 0, rc;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *fp = is_stdin ? stdin : cs_fopen_read(path);
    struct stat st;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, name, 0, "cannot open: %s", strerror(errno));
    if (!is_stdin)
        cs_input_note(path);
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size > (off_t)CS_SCHED_MAX_BYTES)
        rc = cs_error_fail(err, CS_ERR_INVALID, name, 0, "file is larger than %ld bytes",
                           CS_SCHED_MAX_BYTES);
    else
        rc = cs_sched_read_xml_stream(fp, name, CS_SCHED_MAX_BYTES, tap, ctx, out, err);
    if (!is_stdin)
        fclose(fp);
    return rc;
}

int cs_sched_read_xml(const char *path, struct cs_sched **out, struct cs_error *err)
{
    return cs_sched_read_xml_tap(path, NULL, NULL, out, err);
}

void cs_xml_put_escaped(FILE *fp, const char *s)
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
    cs_xml_put_escaped(fp, sched->name ? sched->name : "");
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
    struct cs_outfile out;
    int rc = cs_outfile_open(&out, path, err);

    if (rc != 0)
        return rc;
    /* A stream error is reported by the close, with its reason; the file is then unchanged. */
    cs_sched_write_xml(sched, out.fp);
    return cs_outfile_close(&out, err);
}

/* ---- element trees of other XML dialects (cs_xml_tree_read) */

struct tree {
    const char *name; /* for messages */
    struct cs_error *err;
    xmlParserCtxtPtr ctxt;
    const char *buf;
    size_t len, pos;
    struct cs_xml_elem *root, *cur; /* cur: the open element (NULL before the root) */
    int depth, nelems;
    int rc;      /* the first failure */
    int stopped; /* the parser was stopped: a DOCTYPE, a limit, or too many attributes */
    struct cs_error first;
};

/* Record the tree reader's first failure at line and stop the parser. */
static void tree_fail(struct tree *t, int code, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void tree_fail(struct tree *t, int code, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[512];

    if (t->rc == 0) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        t->rc = cs_error_fail(&t->first, code, t->name, line, "%s", msg);
    }
    t->stopped = 1;
    xmlStopParser(t->ctxt);
}

static void tree_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                       const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                       int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    struct tree *t = ctx;
    int line = xmlSAX2GetLineNumber(t->ctxt);
    struct cs_xml_elem *e;

    (void)prefix, (void)uri, (void)nb_namespaces, (void)namespaces, (void)nb_defaulted;
    if (t->rc != 0)
        return;
    if (++t->nelems > CS_XML_TREE_MAX_ELEMS || t->depth >= CS_XML_TREE_MAX_DEPTH) {
        tree_fail(t, CS_ERR_INVALID, line, "more than %d elements, or nested more than %d deep",
                  CS_XML_TREE_MAX_ELEMS, CS_XML_TREE_MAX_DEPTH);
        return;
    }
    if ((e = calloc(1, sizeof(*e))) == NULL ||
        (e->name = strdup((const char *)localname)) == NULL ||
        (nb_attributes > 0 &&
         (e->attrs = calloc(2 * (size_t)nb_attributes, sizeof(char *))) == NULL)) {
        if (e != NULL)
            free(e->name);
        free(e);
        tree_fail(t, CS_ERR_NOMEM, line, "out of memory");
        return;
    }
    e->line = line > 0 ? line : 0;
    e->parent = t->cur;
    if (t->cur == NULL) {
        t->root = e;
    } else {
        struct cs_xml_elem **at = &t->cur->child;

        while (*at != NULL)
            at = &(*at)->next;
        *at = e;
    }
    t->cur = e;
    t->depth++;
    for (int i = 0; i < nb_attributes; i++) {
        const xmlChar **a = attributes + 5 * i;

        if ((e->attrs[2 * i] = strdup((const char *)a[0])) == NULL ||
            (e->attrs[2 * i + 1] = decode_value(a[3], a[4])) == NULL) {
            free(e->attrs[2 * i]);
            tree_fail(t, CS_ERR_NOMEM, line, "out of memory");
            return;
        }
        e->nattrs++;
    }
}

static void tree_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
    struct tree *t = ctx;

    (void)localname, (void)prefix, (void)uri;
    if (t->rc != 0 || t->cur == NULL)
        return;
    t->cur = t->cur->parent;
    t->depth--;
}

static void tree_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                         const xmlChar *system_id)
{
    struct tree *t = ctx;

    (void)name, (void)external_id, (void)system_id;
    tree_fail(t, CS_ERR_PARSE, xmlSAX2GetLineNumber(t->ctxt),
              "document type declarations and entities are not allowed");
}

static int tree_feed(void *ctx, char *out, int len)
{
    struct tree *t = ctx;

    if (t->ctxt != NULL && t->ctxt->maxatts > 5 * CS_XML_MAX_ATTRS) {
        if (t->rc == 0)
            t->rc = cs_error_fail(&t->first, CS_ERR_PARSE, t->name, xmlSAX2GetLineNumber(t->ctxt),
                                  "malformed XML: a start tag with more than %d attributes",
                                  CS_XML_MAX_ATTRS);
        t->stopped = 1;
        return -1;
    }
    return cs_xml_feed(t->buf, t->len, &t->pos, out, len);
}

void cs_xml_tree_free(struct cs_xml_elem *e)
{
    while (e != NULL) {
        struct cs_xml_elem *next = e->next;

        cs_xml_tree_free(e->child);
        for (int i = 0; i < 2 * e->nattrs; i++)
            free(e->attrs[i]);
        free(e->attrs);
        free(e->name);
        free(e);
        e = next;
    }
}

const char *cs_xml_attr(const struct cs_xml_elem *e, const char *name)
{
    for (int i = 0; i < e->nattrs; i++)
        if (strcmp(e->attrs[2 * i], name) == 0)
            return e->attrs[2 * i + 1];
    return NULL;
}

int cs_xml_tree_read(const char *buf, size_t len, const char *name, struct cs_xml_elem **root,
                     struct cs_error *err)
{
    struct tree t = {.name = name ? name : "<memory>", .err = err, .buf = buf, .len = len};
    xmlSAXHandler sax;
    int rc;

    cs_xml_quiet();
    cs_error_init(&t.first);
    memset(&sax, 0, sizeof(sax));
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = tree_start;
    sax.endElementNs = tree_end;
    sax.internalSubset = tree_doctype;
    if (len == 0)
        return cs_error_fail(err, CS_ERR_PARSE, t.name, 1, "malformed XML: the file is empty");
    t.ctxt = xmlCreateIOParserCtxt(&sax, &t, tree_feed, NULL, &t, XML_CHAR_ENCODING_NONE);
    if (t.ctxt == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, t.name, 0, "out of memory");
    xmlCtxtUseOptions(t.ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                  XML_PARSE_BIG_LINES);
    xmlParseDocument(t.ctxt);
    if (t.stopped || (t.rc != 0 && t.ctxt->wellFormed))
        rc = cs_error_fail(err, t.rc, t.first.file, t.first.line, "%s", t.first.msg);
    else if (cs_xml_stopped_at_nul(t.ctxt))
        rc = cs_error_fail(err, CS_ERR_PARSE, t.name, t.ctxt->input->line,
                           "malformed XML: a NUL byte, which XML does not allow (the text after "
                           "it would be ignored)");
    else if (!t.ctxt->wellFormed || t.root == NULL)
        rc = malformed(t.ctxt, t.name, err);
    else
        rc = t.rc;
    if (t.ctxt->myDoc != NULL)
        xmlFreeDoc(t.ctxt->myDoc);
    xmlFreeParserCtxt(t.ctxt);
    if (rc != 0) {
        cs_xml_tree_free(t.root);
        return rc;
    }
    *root = t.root;
    return 0;
}

const char *cs_xml_library_version(void)
{
    return LIBXML_DOTTED_VERSION;
}
