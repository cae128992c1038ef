/*
 * refine.h — what refine stored in a result file, for recommend and report:
 * the /refine group (fmt_store.h). The procedure itself is refine_plan.h
 * (decisions) and the refine command (cli/cmd_refine.c).
 */
#ifndef STORMSWEEP_REFINE_H
#define STORMSWEEP_REFINE_H

#include "fmt_store.h"

#endif
