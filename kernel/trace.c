// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the tracepoints of kiwi_trace.h are instantiated here.
 */
#define CREATE_TRACE_POINTS
#include "kiwi_trace.h"
