/*
 * web-assets.h -- the dashboard's files (web/), embedded in the binary at
 * build time by cmake/embed-web.cmake, which generates hd_web_assets[].
 */
#ifndef HD_WEB_ASSETS_H
#define HD_WEB_ASSETS_H

#include <stddef.h>

typedef struct hd_web_asset {
	const char *path;         /* relative to web/, e.g. "app.js" */
	const char *content_type; /* "text/javascript; charset=utf-8" */
	const unsigned char *bytes;
	size_t len;
	const char *etag; /* quoted strong validator from the SHA-256 */
} hd_web_asset;

/* Sorted by path; ends with a row whose path is NULL. */
extern const hd_web_asset hd_web_assets[];

#endif
