/* The field numbers of profile.proto (github.com/google/pprof, proto/profile.proto),
 * one copy for the runtime's encoders, the CLI's pprof writer and its reader. */
#ifndef KESTREL_PPROF_FIELDS_H
#define KESTREL_PPROF_FIELDS_H

enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
/* The comment that lists, by index, the strings of the table the runtime wrote as
 * bytes: a string that is not UTF-8 (a path, a thread name) has each byte of 0x80 or
 * more written as the code point of the same value (U+0080..U+00FF), so the table
 * stays UTF-8 for every reader and kestrel's maps those back to the bytes. */
#define PPROF_BYTES_COMMENT "kestrel: strings written as bytes:"

enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
    MAPPING_ID = 1,
    MAPPING_START = 2,
    MAPPING_LIMIT = 3,
    MAPPING_OFFSET = 4,
    MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6,
    MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8,
    MAPPING_HAS_LINE_NUMBERS = 9,
    MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2, LINE_COLUMN = 3 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

#endif
