// dpx reproduce NAME [--seeds S] [--json] | --list: a published experiment, its rows' published
// accuracy beside the measured mean and min–max over seeds.
#include <algorithm>
#include <cmath>
#include <string>

#include "cli.h"
#include "commands.h"
#include "common/format.h"
#include "io/json_writer.h"
#include "training/reproduction.h"
#include "training_support.h"

namespace dpx::cli {

using core::formatNumber;
using core::JsonWriter;
using namespace core::training;

namespace {

std::string percent(double accuracy) { return formatNumber(100 * accuracy, 4) + " %"; }

void printList(std::ostream& out) {
  for (const ExperimentInfo& e : experiments()) {
    out << e.id << "\n  " << e.title << "\n  " << e.citation << "; " << e.source << ", " << e.runsPerSeed
        << (e.runsPerSeed == 1 ? " run" : " runs") << " per seed\n";
  }
}

void writeJson(std::ostream& out, const Reproduction& r) {
  JsonWriter json;
  json.beginObject().field("experiment", r.experiment).field("title", r.title).field("citation", r.citation);
  json.field("data", r.data).field("seeds", static_cast<std::int64_t>(r.seeds)).field("cancelled", r.cancelled);
  json.key("rows").beginArray();
  for (const ReproducedRow& row : r.rows) {
    json.beginObject().field("name", row.name);
    if (row.published) {
      json.field("published", *row.published);
    } else {
      json.key("published").null();
    }
    json.field("measured_mean", row.measuredMean).field("measured_min", row.measuredMin);
    json.field("measured_max", row.measuredMax);
    json.key("measured").beginArray();
    for (double a : row.perSeed) json.value(a);
    json.endArray();
    if (row.epsilon) {
      json.field("epsilon", *row.epsilon);
    } else {
      json.key("epsilon").null();
    }
    json.field("delta", row.delta);
    if (row.sigma) {
      json.field("sigma", *row.sigma);
    } else {
      json.key("sigma").null();
    }
    json.field("accountant", row.accountant).field("mechanism", row.mechanism).field("settings", row.settings);
    if (!row.epochTestAccuracy.empty()) {
      json.key("epochs").beginArray();
      for (std::size_t e = 0; e < row.epochTestAccuracy.size(); ++e) {
        json.beginObject().field("epoch", static_cast<std::int64_t>(e + 1));
        json.field("test_accuracy", row.epochTestAccuracy[e]).field("epsilon_spent", row.epochEpsilon[e]);
        json.endObject();
      }
      json.endArray();
    }
    json.field("seconds", row.seconds).endObject();
  }
  json.endArray();
  json.key("notes").beginArray();
  for (const std::string& n : r.notes) json.value(n);
  json.endArray();
  json.field("seconds", r.seconds).endObject();
  out << json.str() << "\n";
}

// Rows followed epoch by epoch: one line per epoch, each row's test accuracy and ε spent.
void printEpochTable(std::ostream& out, const Reproduction& r) {
  std::size_t epochs = 0;
  for (const ReproducedRow& row : r.rows) epochs = std::max(epochs, row.epochTestAccuracy.size());
  if (epochs == 0) return;
  out << "\nTest accuracy (ε spent) per epoch:\nepoch";
  for (std::size_t i = 0; i < r.rows.size(); ++i) out << "\trow " << i + 1;
  out << "\n";
  for (std::size_t e = 0; e < epochs; ++e) {
    out << e + 1;
    for (const ReproducedRow& row : r.rows) {
      out << "\t";
      if (e < row.epochTestAccuracy.size()) {
        out << percent(row.epochTestAccuracy[e]) << " (" << formatNumber(row.epochEpsilon[e], 3) << ")";
      }
    }
    out << "\n";
  }
}

void writeText(std::ostream& out, const Reproduction& r) {
  out << r.experiment << ": " << r.title << "\n" << r.citation << "\n" << r.data << "\n\n";
  for (const ReproducedRow& row : r.rows) {
    out << row.name << "\n  published " << (row.published ? percent(*row.published) : std::string("—")) << ", measured "
        << percent(row.measuredMean) << " [" << percent(row.measuredMin) << ", " << percent(row.measuredMax)
        << "] over " << row.perSeed.size() << (row.perSeed.size() == 1 ? " seed" : " seeds");
    if (row.published) {
      const double gap = 100 * (row.measuredMean - *row.published);
      out << " (" << (gap >= 0 ? "+" : "") << formatNumber(gap, 2) << " points)";
    }
    out << "\n  ";
    if (row.epsilon) {
      out << "ε = " << formatNumber(*row.epsilon, 6) << " at δ = " << formatNumber(row.delta)
          << ", σ = " << formatNumber(*row.sigma, 6) << ", " << row.accountant;
    } else {
      out << "not private";
    }
    out << "\n  " << row.settings << "; " << formatNumber(row.seconds, 3) << " s\n";
  }
  printEpochTable(out, r);
  for (const std::string& n : r.notes) out << "\nNote: " << n << "\n";
  out << "\n" << formatNumber(r.seconds, 3) << " s end to end" << (r.cancelled ? " (cancelled)" : "") << "\n";
}

}  // namespace

int commandReproduce(const Arguments& args, Io& io) {
  // The experiment's name comes first (dpx reproduce NAME [options]); the rest are flags.
  Arguments flags = args;
  std::string name;
  if (flags.size() > 1 && !flags[1].empty() && flags[1].front() != '-') {
    name = flags[1];
    flags.erase(flags.begin() + 1);
  }
  CommandLine parser;
  parser.addPositionalArgument("experiment", "the experiment's name (dpx reproduce --list names them)");
  parser.addOption("list", "the experiments, one per paragraph");
  parser.addOption("seeds", "runs per row, seeds 1 … S (default 1)", "S");
  parser.addOption("threads", "worker threads, 0 = all cores (default)", "T");
  parser.addOption("json", "machine-readable JSON output");
  parser.addOption("quiet", "no progress on stderr");
  if (auto code = parseOrExit(parser, flags, io,
                              "run a published experiment and print its published accuracy beside the measured "
                              "mean and min–max over seeds")) {
    return *code;
  }
  if (parser.isSet("list")) {
    printList(io.out);
    return kExitOk;
  }
  if (name.empty()) {
    return fail(io, core::Status::invalidArgument("name an experiment first: dpx reproduce NAME [--seeds S] [--json] "
                                                  "(dpx reproduce --list names them)"));
  }
  const auto seeds = integerOption(parser, "seeds", 1, 1, 20);
  if (!seeds) return fail(io, seeds.status());
  const auto threads = integerOption(parser, "threads", 0, 0, 1024);
  if (!threads) return fail(io, threads.status());
  ReproductionControl control;
  control.threads = static_cast<int>(*threads);
  std::string lastStatus;
  if (!parser.isSet("quiet")) {
    control.status = [&](const std::string& text) {
      // One line per stage, and the extraction's progress in steps of 10 %.
      if (text.rfind("ScatterNet features", 0) == 0 && !lastStatus.empty() &&
          lastStatus.rfind("ScatterNet features", 0) == 0 && text.size() == lastStatus.size() &&
          text.substr(0, text.size() - 3) == lastStatus.substr(0, lastStatus.size() - 3)) {
        return;
      }
      lastStatus = text;
      io.err << text << "\n";
      io.err.flush();
    };
  }
  const core::Result<Reproduction> r = reproduce(name, static_cast<int>(*seeds), control);
  if (!r) return fail(io, r.status());
  if (parser.isSet("json")) {
    writeJson(io.out, *r);
  } else {
    writeText(io.out, *r);
  }
  return r->cancelled ? kExitFailure : kExitOk;
}

}  // namespace dpx::cli
