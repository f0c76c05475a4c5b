// Reading a run described by Google dp_accounting's DpEvents (python/dp_accounting/dp_event.py):
// the JSON of `event.to_named_tuple()` with `_asdict()` applied recursively, e.g.
//   {"module_name": "dp_accounting.dp_event", "class_name": "SelfComposedDpEvent", "count": 14063,
//    "event": {"module_name": "dp_accounting.dp_event", "class_name": "PoissonSampledDpEvent",
//              "sampling_probability": 0.004266666666666667,
//              "event": {"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent",
//                        "noise_multiplier": 1.1}}}
// flattened into the phases of accounting/phased_run.h:
//   GaussianDpEvent {noise_multiplier}                 one step at q = 1
//   PoissonSampledDpEvent {sampling_probability, event} one step at q (event: a Gaussian)
//   SelfComposedDpEvent {event, count}                  the event `count` times
//   ComposedDpEvent {events}                            the events one after the other
//   NoOpDpEvent                                         nothing (no privacy cost)
//   RandomAllocationDpEvent {event, num_selected, num_steps}
//                                                       one epoch of k-of-t random allocation
//                                                       (event: a Gaussian; k = 0: nothing)
// A self-composed composition repeats each of its phases `count` times (A, B, A, B, … reads as
// A×count, B×count: composition commutes, so no accountant can tell them apart), and
// consecutive phases of the same step are merged (a run written in pieces reads as the run
// written whole). Every other class (LaplaceDpEvent, SampledWithoutReplacementDpEvent,
// NonPrivateDpEvent, UnsupportedDpEvent, …) is refused by name with its place in the document
// ("events[2].event: SampledWithoutReplacementDpEvent is not supported: …"), as are an unknown
// field, a field of the wrong type and a value out of its range; malformed JSON is refused with
// its byte, line and column. Stricter than dp_accounting where its bounds allow no privacy:
// sampling_probability must be in (0, 1] and noise_multiplier > 0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "accounting/phased_run.h"
#include "common/status.h"

namespace dpx::core {

// The module dp_accounting's event classes live in (their named tuples' module_name).
inline constexpr std::string_view kDpEventModule = "dp_accounting.dp_event";

// The phases of the run the events document describes (at least one).
Result<std::vector<accounting::Phase>> phasesFromDpEventJson(std::string_view text);

// The same from a file; the message of a refusal starts with the file's path.
Result<std::vector<accounting::Phase>> readDpEventFile(const std::string& path);

}  // namespace dpx::core
