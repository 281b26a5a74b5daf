/*
 * huddle.h -- the whole public API of libhuddle. Surfaces include this or
 * the single headers below; nothing else.
 */
#ifndef HUDDLE_H
#define HUDDLE_H

#include "activity.h"
#include "agent.h"
#include "attach.h"
#include "autorun.h"
#include "board.h"
#include "budget.h"
#include "cancel.h"
#include "conversation.h"
#include "buf.h"
#include "err.h"
#include "events.h"
#include "envelope.h"
#include "exchange.h"
#include "live.h"
#include "log.h"
#include "mailbox.h"
#include "prompt.h"
#include "store.h"
#include "room.h"
#include "room_lock.h"
#include "shutdown.h"
#include "supervisor.h"
#include "runtime.h"
#include "session.h"
#include "team.h"
#include "util.h"
#include "version.h"

#endif
