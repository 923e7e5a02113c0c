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

/*
 * The value as text in the given format. Strings are short fixed phrases
 * written in this program (no quotes, commas or control characters), so
 * JSON needs only the surrounding quotes and CSV none.
 */
static void format_value(const field_t *f, output_t format, char *out, size_t size)
{
    static const char *const unknown[] = {[OUTPUT_TABLE] = "-", [OUTPUT_JSON] = "null",
                                          [OUTPUT_CSV] = ""};
    if (f->type == FIELD_NULL || (f->type == FIELD_NUM && isnan(f->number)) ||
        (f->type == FIELD_STR && f->string == NULL)) {
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

/* One result: JSON and CSV print it as a one-row series; a table as "key  value" lines. */
void report_print(const report_t *r, output_t format)
{
    if (format != OUTPUT_TABLE) {
        report_print_row(r, format, true);
        return;
    }
    char value[96];
    for (int i = 0; i < r->count; i++) {
        format_value(&r->fields[i], OUTPUT_TABLE, value, sizeof value);
        printf("%-24s %s\n", r->fields[i].key, value);
    }
    fflush(stdout);
}

/* Columns are as wide as their key, and at least 8. */
static int column_width(const field_t *f)
{
    int w = (int)strlen(f->key);
    return w < 8 ? 8 : w;
}

/* One line: the keys (a header) or the values; JSON pairs each value with its key. */
static void print_line(const report_t *r, output_t format, bool keys)
{
    char value[96];
    for (int i = 0; i < r->count; i++) {
        const field_t *f = &r->fields[i];
        if (keys)
            snprintf(value, sizeof value, "%s", f->key);
        else
            format_value(f, format, value, sizeof value);
        if (format == OUTPUT_JSON)
            printf("%s\"%s\":%s", i ? "," : "{", f->key, value);
        else
            printf("%s%*s", i == 0 ? "" : format == OUTPUT_CSV ? "," : "  ",
                   format == OUTPUT_TABLE ? column_width(f) : 0, value);
    }
    puts(format == OUTPUT_JSON ? "}" : "");
}

void report_print_row(const report_t *r, output_t format, bool first)
{
    if (first && format != OUTPUT_JSON)
        print_line(r, format, true);
    print_line(r, format, false);
    fflush(stdout);
}
