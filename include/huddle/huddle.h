/*
 * huddle.h -- the whole public API of libhuddle. Surfaces include this or
 * the single headers below; nothing else.
 */
#ifndef HUDDLE_H
#define HUDDLE_H

#include "agent.h"
#include "buf.h"
#include "err.h"
#include "events.h"
#include "log.h"
#include "store.h"
#include "team.h"
#include "util.h"
#include "version.h"

#endif
