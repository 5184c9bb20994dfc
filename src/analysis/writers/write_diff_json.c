/* A comparison as JSON (write_diff_json.h). */
#include "analysis/writers/write_diff_json.h"

#include <errno.h>

#include "analysis/model/escape.h"

static void put_side(FILE *out, const char *key, const struct diff_side *d)
{
    fprintf(out, ",\"%s\":{\"base\":%.6g,\"base_se\":%.6g,\"new\":%.6g,\"new_se\":%.6g,"
                 "\"z\":%.4g,\"real\":%s}",
            key, d->base, d->base_se, d->now, d->now_se, d->z, d->real ? "true" : "false");
}

static void put_source(FILE *out, const char *key, const struct summary *s)
{
    fprintf(out, "\"%s\":", key);
    escape_json(out, s->profile->source ? s->profile->source : "");
}

int write_diff_json(const struct diff *d, FILE *out)
{
    fputc('{', out);
    put_source(out, "base", d->base);
    fputc(',', out);
    put_source(out, "new", d->now);
    fputs(",\"sample_type\":", out);
    escape_json(out, d->now->profile->sample_types[d->now->type].type);
    fprintf(out, ",\"alpha\":%g,\"absolute\":%s,\"tests\":%zu,\"functions\":[", d->alpha,
            d->absolute ? "true" : "false", d->n_tests);
    for (size_t i = 0; i < d->n_rows; i++) {
        const struct diff_row *r = &d->rows[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        escape_json(out, r->name);
        fputs(",\"file\":", out);
        if (r->file)
            escape_json(out, r->file);
        else
            fputs("null", out);
        fprintf(out, ",\"presence\":\"%s\"",
                r->presence == DIFF_NEW_ONLY ? "new" : r->presence == DIFF_GONE ? "gone" : "both");
        put_side(out, "self", &r->self);
        put_side(out, "total", &r->total);
        fputc('}', out);
    }
    fputs("]}", out);
    return ferror(out) ? -EIO : 0;
}
