// Shared by dpx train and dpx audit: the training options, the data + trainer they set up, and
// the `dpx train --json` object of a training result.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cli_support.h"
#include "io/json_writer.h"
#include "training/trainer.h"

namespace dpx::cli {

struct TrainingSetup {
  std::shared_ptr<const core::training::TrainTestSplit> data;
  std::unique_ptr<core::training::Trainer> trainer;
  std::string description;
};

struct TrainingData {
  std::shared_ptr<const core::training::TrainTestSplit> data;
  std::string description;
};

void addTrainingOptions(CommandLine& parser);
// --model, --hidden, --activation.
core::Result<core::training::ModelSpec> modelSpecFromParser(const CommandLine& parser);
// --mechanism, --accountant, --target-epsilon, --seed, --threads, --epochs, --model and the knobs.
core::Result<core::training::TrainerConfig> trainerConfigFromParser(const CommandLine& parser);
// --data, --test-fraction, --label-column, --scaling: the loaded, split data set.
core::Result<TrainingData> trainingDataFromParser(const CommandLine& parser, std::uint64_t seed);
core::Result<std::int64_t> integerOption(const CommandLine& parser, std::string_view name, std::int64_t fallback,
                                         std::int64_t lo, std::int64_t hi);
core::Result<TrainingSetup> setupTraining(const CommandLine& parser);
void writeTrainingJson(core::JsonWriter& json, const TrainingSetup& setup, const core::training::TrainingResult& r);

}  // namespace dpx::cli
