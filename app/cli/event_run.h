// dpx epsilon | delta --events FILE: a run described by Google dp_accounting's DpEvents (the JSON
// of `event.to_named_tuple()._asdict()`), flattened into phases (core/io/dp_event.h) and
// accounted by the exact (PLD) or the moments (RDP) accountant. The file describes the run, so the
// knob flags that would describe it too (--n, --m, --sigma, --K, --epochs, …) are refused as
// conflicting; --delta, --alpha, --alphas, --conversion, --discretisation and --accuracy apply.
#pragma once

#include "accounting_invocation.h"

namespace dpx::cli {

// The flag, for the commands' option lists.
OptionSpec eventsOption();

// Whether the command line names an events file (after parseAccountingFlags).
bool hasEvents(const AccountingInvocation& inv);

// The rest of `dpx epsilon --events FILE` after parseAccountingFlags: exit status.
int epsilonOfEvents(AccountingInvocation& inv, Io& io);

// The rest of `dpx delta --events FILE --epsilon E` after parseAccountingFlags: exit status.
int deltaOfEvents(AccountingInvocation& inv, Io& io);

}  // namespace dpx::cli
