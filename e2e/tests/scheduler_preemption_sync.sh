#!/usr/bin/env bash
# End to end: scheduler_preemption.sh with SchedulerAsyncPreemption off (victims evicted inside
# the scheduling cycle, before the nomination: the behaviour before v1.33). Prints TAP-style lines.
SK_ROOT=${SK_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SK_PREEMPT_FEATURE_GATES=SchedulerAsyncPreemption=false exec bash "$SK_ROOT/e2e/tests/scheduler_preemption.sh"
