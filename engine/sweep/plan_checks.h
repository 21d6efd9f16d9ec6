#pragma once
// What a plan says of its runs before any starts, beyond their states: whether the data they
// read is there, and which of them train the same model.

#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/sweep/sweep_state.h"

namespace mavg {

// The data of `configs` that cannot be read (config/data_paths.h), each distinct path looked at
// once, as one line: "the data of <which> cannot be read: <key> <path>: <why> (<n> of the
// runs); ..."; empty when every path can be read. `which` names the runs ("the 12 run(s) not
// done").
std::string DataProblems(const std::vector<const RunConfig*>& configs, const std::string& which);

// The runs of a plan that a launch (`sweep run`, `sweep retry`) may still start, and so need
// their data: every one but the completed (done, stale) and the running. (`sweep run
// --rerun-stale` checks the stale runs it relaunches when it launches them.)
std::vector<const RunConfig*> RunsNeedingData(const std::vector<PlannedRun>& plan);

// TrainingKey (config/schema.h): the settings that decide what a run trains. With one worker
// nothing is ever combined (train/averager.cpp returns at once; the trainer steps every
// minibatch of the shard whatever parallel.average_every says), so the keys declared
// OneWorkerFree (the averaging settings and the lr scaling, x N with N = 1) are left out.

// The groups of runs that train the same model (equal TrainingKey, different run ids): a note
// with one line per group naming each run and its axes; empty when there is none.
std::string FormatSameTraining(const std::vector<PlannedRun>& runs);

}  // namespace mavg
