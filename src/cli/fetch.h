/* fetch — `kestrel report/export/view http://HOST:PORT/PATH`: the profile a
 * kestrel-profiled program serves (or any net/http/pprof endpoint), fetched with a
 * small HTTP/1.1 GET of kestrel's own over a plain socket. Plain http is all such an
 * endpoint speaks (kestrel's serves loopback by default), so libcurl and its TLS stack
 * would be a dependency for nothing. */
#ifndef KESTREL_CLI_FETCH_H
#define KESTREL_CLI_FETCH_H
#include <stddef.h>

/* 1 when `input` is an http:// URL. */
int fetch_is_url(const char *input);

/* Fetches url's body into a new temporary file whose path goes to `path` (the caller
 * unlinks it). The wait is bounded: the URL's seconds= plus 60 s, else 60 s. 0, or -1
 * with why (for an HTTP error, its status and the server's text). */
int fetch_url(const char *url, char *path, size_t path_size, char *why, size_t why_size);

/* The last segment of the URL's path ("profile", "heap"...), for output names. */
void fetch_url_name(const char *url, char *out, size_t size);
#endif
