/*
 * report.c - see report.h. Output is flushed after every result so that a
 * script reading scan's lines sees each idle count as soon as it is done.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static field_t *add(report_t *r, const char *key, field_type_t type)
{
    if (r->count == REPORT_MAX_FIELDS) {
        fprintf(stderr, "loadgen: too many result fields (raise REPORT_MAX_FIELDS)\n");
        exit(1);
    }
    field_t *f = &r->fields[r->count++];
    *f = (field_t){.key = key, .type = type};
    return f;
}

void report_int(report_t *r, const char *key, long long value)
{
    add(r, key, FIELD_INT)->integer = value;
}

void report_num(report_t *r, const char *key, double value, int decimals)
{
    field_t *f = add(r, key, FIELD_NUM);
    f->number = value;
    f->decimals = decimals;
}

void report_bool(report_t *r, const char *key, bool value)
{
    add(r, key, FIELD_BOOL)->boolean = value;
}

void report_str(report_t *r, const char *key, const char *value)
{
    add(r, key, FIELD_STR)->string = value;
}

void report_null(report_t *r, const char *key)
{
    add(r, key, FIELD_NULL);
}

/* "1503.20" -> "1503.2", "1.500" -> "1.5", "95.0" stays. */
static void format_number(char *out, size_t size, double value, int decimals)
{
    snprintf(out, size, "%.*f", decimals, value);
    char *dot = strchr(out, '.');
    if (!dot)
        return;
    char *end = out + strlen(out) - 1;
    while (end > dot + 1 && *end == '0')
        *end-- = '\0';
}

static bool is_unknown(const field_t *f)
{
    return f->type == FIELD_NULL || (f->type == FIELD_NUM && isnan(f->number)) ||
           (f->type == FIELD_STR && f->string == NULL);
}

/*
 * The value as text in the given format. Strings are short fixed phrases
 * written in this program (no quotes, commas or control characters), so
 * JSON needs only the surrounding quotes and CSV none.
 */
static void format_value(const field_t *f, output_t format, char *out, size_t size)
{
    static const char *const unknown[] = {[OUTPUT_TABLE] = "-", [OUTPUT_JSON] = "null",
                                          [OUTPUT_CSV] = ""};
    if (is_unknown(f)) {
        snprintf(out, size, "%s", unknown[format]);
        return;
    }
    switch (f->type) {
    case FIELD_INT:
        snprintf(out, size, "%lld", f->integer);
        break;
    case FIELD_NUM:
        format_number(out, size, f->number, f->decimals);
        break;
    case FIELD_BOOL:
        snprintf(out, size, "%s", f->boolean ? "true" : "false");
        break;
    case FIELD_STR:
        snprintf(out, size, format == OUTPUT_JSON ? "\"%s\"" : "%s", f->string);
        break;
    case FIELD_NULL:
        break;
    }
}

static void print_json(const report_t *r)
{
    char value[96];
    putchar('{');
    for (int i = 0; i < r->count; i++) {
        format_value(&r->fields[i], OUTPUT_JSON, value, sizeof value);
        printf("%s\"%s\":%s", i ? "," : "", r->fields[i].key, value);
    }
    printf("}\n");
}

static void print_csv(const report_t *r, bool header)
{
    char value[96];
    for (int i = 0; header && i < r->count; i++)
        printf("%s%s", i ? "," : "", r->fields[i].key);
    if (header)
        putchar('\n');
    for (int i = 0; i < r->count; i++) {
        format_value(&r->fields[i], OUTPUT_CSV, value, sizeof value);
        printf("%s%s", i ? "," : "", value);
    }
    putchar('\n');
}

void report_print(const report_t *r, output_t format)
{
    char value[96];
    if (format == OUTPUT_JSON) {
        print_json(r);
    } else if (format == OUTPUT_CSV) {
        print_csv(r, true);
    } else {
        for (int i = 0; i < r->count; i++) {
            format_value(&r->fields[i], OUTPUT_TABLE, value, sizeof value);
            printf("%-24s %s\n", r->fields[i].key, value);
        }
    }
    fflush(stdout);
}

/* Columns are as wide as their key, and at least 8. */
static int column_width(const field_t *f)
{
    int w = (int)strlen(f->key);
    return w < 8 ? 8 : w;
}

void report_print_row(const report_t *r, output_t format, bool first)
{
    char value[96];
    if (format == OUTPUT_JSON || format == OUTPUT_CSV) {
        if (format == OUTPUT_JSON)
            print_json(r);
        else
            print_csv(r, first);
        fflush(stdout);
        return;
    }
    if (first) {
        for (int i = 0; i < r->count; i++)
            printf("%s%*s", i ? "  " : "", column_width(&r->fields[i]), r->fields[i].key);
        putchar('\n');
    }
    for (int i = 0; i < r->count; i++) {
        format_value(&r->fields[i], OUTPUT_TABLE, value, sizeof value);
        printf("%s%*s", i ? "  " : "", column_width(&r->fields[i]), value);
    }
    putchar('\n');
    fflush(stdout);
}
