/*
 * report.h - results as JSON lines for scripts, or as tables for people.
 *
 * A mode collects its figures as an ordered list of named fields and prints
 * the list once, so the JSON keys and the table's labels cannot disagree.
 * With --json each result is one JSON object on one line. Otherwise a single
 * result prints as "key  value" lines, and scan prints one table row per
 * idle count under a header of the same keys.
 */
#ifndef LOADGEN_REPORT_H
#define LOADGEN_REPORT_H

#include <stdbool.h>

#define REPORT_MAX_FIELDS 40

typedef enum { FIELD_INT, FIELD_NUM, FIELD_BOOL, FIELD_STR } field_type_t;

typedef struct {
    const char *key;
    field_type_t type;
    long long integer;
    double number; /* NAN prints as null (JSON) or "-" (table) */
    int decimals;  /* for number; trailing zeros are trimmed */
    bool boolean;
    const char *string;
} field_t;

typedef struct {
    field_t fields[REPORT_MAX_FIELDS];
    int count;
} report_t;

void report_int(report_t *r, const char *key, long long value);
void report_num(report_t *r, const char *key, double value, int decimals);
void report_bool(report_t *r, const char *key, bool value);
void report_str(report_t *r, const char *key, const char *value);

/* The whole result: one JSON line, or one "key  value" line per field. */
void report_print(const report_t *r, bool json);

/* One row of a table (JSON: one line); the header comes with the first row. */
void report_print_row(const report_t *r, bool json, bool first);

#endif /* LOADGEN_REPORT_H */
