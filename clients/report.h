/*
 * report.h - results as JSON lines or CSV for scripts, or as tables for people.
 *
 * A mode collects its figures as an ordered list of named fields and prints
 * the list once, so the JSON keys, the CSV columns and the table's labels
 * cannot disagree. A mode always adds the same keys in the same order; a
 * figure it could not measure is still added, as null (JSON), an empty cell
 * (CSV) or "-" (table), never dropped, so a script sees the same columns in
 * every run.
 *
 * --json: each result is one JSON object on one line.
 * --csv:  a header line of the keys, then one row per result.
 * table:  a single result prints as "key  value" lines; scan prints one
 *         table row per idle count under a header of the same keys.
 */
#ifndef LOADGEN_REPORT_H
#define LOADGEN_REPORT_H

#include <stdbool.h>

#define REPORT_MAX_FIELDS 112

typedef enum { OUTPUT_TABLE, OUTPUT_JSON, OUTPUT_CSV } output_t;

typedef enum { FIELD_INT, FIELD_NUM, FIELD_BOOL, FIELD_STR, FIELD_NULL } field_type_t;

typedef struct {
    const char *key;
    field_type_t type;
    long long integer;
    double number; /* NAN prints as unknown */
    int decimals;  /* for number; trailing zeros are trimmed */
    bool boolean;
    const char *string; /* NULL prints as unknown */
} field_t;

typedef struct {
    field_t fields[REPORT_MAX_FIELDS];
    int count;
} report_t;

void report_int(report_t *r, const char *key, long long value);
void report_num(report_t *r, const char *key, double value, int decimals);
void report_bool(report_t *r, const char *key, bool value);
void report_str(report_t *r, const char *key, const char *value);
void report_null(report_t *r, const char *key); /* a figure that could not be had */

/* The whole result: one JSON line, a CSV header and row, or "key  value" lines. */
void report_print(const report_t *r, output_t format);

/* One row of a series (scan); the header (table, CSV) comes with the first row. */
void report_print_row(const report_t *r, output_t format, bool first);

#endif /* LOADGEN_REPORT_H */
