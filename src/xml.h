/* xml.h: read and write MSCCL XML schedules (the msccl-tools form), safely. */
#ifndef CS_XML_H
#define CS_XML_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "sched.h"

/* Largest platform file accepted, in bytes (read whole: SimGrid loads it by its path after). */
#define CS_XML_MAX_BYTES (64L * 1024 * 1024)

/* Largest schedule file accepted, in bytes. The schedule reader streams its input, so its memory
 * grows with the steps, not with the bytes: `gen ring --gpus 1024` writes 253 MB. */
#define CS_SCHED_MAX_BYTES (1L << 30)

/* Read a schedule from `path` ("-" reads stdin). Checks what makes a file readable: the syntax,
 * the element structure, every required attribute's presence, type (integer, step type, buffer,
 * protocol, collective) and a range the model can hold. Unknown attributes are reader warnings
 * kept in the schedule (sched->warnings). Whether the schedule is valid (dense unique ids, peers
 * and channels in range, <gpu> count, step indices, dependencies that exist, the runtime's
 * limits) is cs_verify_check's: every user of a schedule read here runs it first. The file streams
 * through libxml2's SAX2 parser, no tree is built: memory grows with the steps. No network; a
 * DOCTYPE (so any DTD or entity), in any encoding, and a NUL byte are errors; a malformed document
 * is reported as such before any rule it breaks. On success stores a new schedule in *out (caller
 * frees) and returns 0; otherwise returns a CS_ERR_* code and describes the problem, with file and
 * line, in err (may be NULL). */
int cs_sched_read_xml(const char *path, struct cs_sched **out, struct cs_error *err);

/* cs_sched_read_xml that also hands every piece of the file, in order, to tap(ctx, piece, n) as
 * it streams (verify's tokenizer rules look at the bytes). A regular file over
 * CS_SCHED_MAX_BYTES is refused before parsing, any other input once it passes the limit. */
int cs_sched_read_xml_tap(const char *path, void (*tap)(void *ctx, const char *piece, size_t n),
                          void *ctx, struct cs_sched **out, struct cs_error *err);

/* The reader over an open stream (name for messages), refusing it once it gives more than
 * max_bytes. */
int cs_sched_read_xml_stream(FILE *fp, const char *name, long max_bytes,
                             void (*tap)(void *ctx, const char *piece, size_t n), void *ctx,
                             struct cs_sched **out, struct cs_error *err);

/* The same for a buffer in memory; `name` is used in messages. */
int cs_sched_read_xml_mem(const char *buf, size_t len, const char *name, struct cs_sched **out,
                          struct cs_error *err);

/* Write the schedule as msccl-tools does (attribute order, two-space indent, nop form). Returns 0,
 * or CS_ERR_IO when the stream reports an error. */
/* s as an XML attribute value or character data: markup and whitespace controls as entities. */
void cs_xml_put_escaped(FILE *fp, const char *s);

int cs_sched_write_xml(const struct cs_sched *sched, FILE *fp);

/* Write to a path through cs_outfile_open (a file is replaced only when complete; "-" writes
 * stdout). 0 or CS_ERR_IO with err set (the file then unchanged). */
int cs_sched_write_xml_file(const struct cs_sched *sched, const char *path, struct cs_error *err);

/* Most attributes a start tag may hold in either reader: libxml2 2.9 compares a tag's attributes
 * pairwise, so a flood of them would run for minutes (a schedule needs 10). */
#define CS_XML_MAX_ATTRS 1024

/* The work of a libxml2 read callback over an input held whole in buf[0..buflen): copy the next
 * at most len bytes from *pos to out and advance *pos. The count copied, 0 at the end. */
int cs_xml_feed(const char *buf, size_t buflen, size_t *pos, char *out, int len);

/* Whether a libxml2 parser context (xmlParserCtxtPtr) stopped on a NUL byte it took for the end
 * of the text, before the end of the input (seen after decoding, so UTF-16 is covered too). */
int cs_xml_stopped_at_nul(const void *parser_ctxt);

/* Keep libxml2 from printing on stderr (the readers report every problem themselves). */
void cs_xml_quiet(void);

/* An element of a small XML document read whole (cs_xml_tree_read): its name, its attributes as
 * NUL-terminated names and values, the line of its start tag, and its children in order. */
struct cs_xml_elem {
    char *name;
    int line;
    int nattrs;
    char **attrs; /* attrs[2 i] is the name of attribute i, attrs[2 i + 1] its value */
    struct cs_xml_elem *parent, *child, *next;
};

/* Most elements and nesting depth of a document cs_xml_tree_read accepts. */
#define CS_XML_TREE_MAX_ELEMS 200000
#define CS_XML_TREE_MAX_DEPTH 64

/* Read the XML document buf[0..len) (name for messages) into a tree of its elements, for
 * readers of other XML dialects than MSCCL's (NCCL's topology files). Safely, as the schedule
 * reader: no network, no DOCTYPE (so no DTD and no entity), a NUL byte or a start tag with more
 * than CS_XML_MAX_ATTRS attributes is an error; at most CS_XML_TREE_MAX_ELEMS elements, nested at
 * most CS_XML_TREE_MAX_DEPTH deep. Text, comments, CDATA and processing instructions are skipped.
 * 0 and *root (free with cs_xml_tree_free), or CS_ERR_PARSE (not well-formed: libxml2's message
 * and line), CS_ERR_INVALID (a limit) or CS_ERR_NOMEM, with err set. */
int cs_xml_tree_read(const char *buf, size_t len, const char *name, struct cs_xml_elem **root,
                     struct cs_error *err);
void cs_xml_tree_free(struct cs_xml_elem *root);

/* The value of attribute name of e, or NULL when e has none. */
const char *cs_xml_attr(const struct cs_xml_elem *e, const char *name);

/* The version of libxml2 the readers were built against, "2.9.14". */
const char *cs_xml_library_version(void);

#endif
