// The per-rank run every workload shares (harness.hpp).
#include "harness.hpp"

#include <cstdio>

#include "run_wall.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"

namespace scalebench {
namespace {

// Warm-up and timed repeats: end to end around each repeat, its check after.
// The energy counters are read just before each repeat's barrier and after the last repeat.
int run_repeats(RankWorkload& w, const RepeatLoop& loop, int reps, PhaseRecorder& rec, EnergyRun& energy, RunWall& wall,
                const Communicator& comm) {
  const int total = loop.total();
  const int warmup = total - reps;
  double checks = 0;
  for (int rep = 0; rep < total; ++rep) {
    if (rep == warmup && warmup > 0) wall.mark("warmup");
    energy.mark();  // before the barrier: reading the counters is never inside a timed repeat
    const double t0 = loop.begin(rep, rec);
    w.repeat(rec);
    const double t1 = wall_seconds();
    rec.add(phase::end_to_end, t1 - t0);
    rec.span(phase::end_to_end, t0, t1);  // the energy's timed interval starts here
    w.check_repeat(rep, rec);
    if (rep >= warmup) checks += wall_seconds() - t1;
    rec.next_repeat();
    loop.end(rep);
  }
  comm.barrier();
  energy.mark();
  wall.mark("timed");
  wall.note_within("checks", checks);
  return total;
}

// Rank 0: the shared sections with the prediction, the table, the failure lines, --json.
void finish_on_root(RunReport& w, RunRecord& run, const Summaries& s, const HarnessSettings& settings,
                    const nlohmann::json& energy, RunWall& wall) {
  RunSections sections = w.sections(s);
  sections.predict = [&w](const Profile& p, const MachineLayout& m) { return w.predict(p, m); };
  run.finish(s.setup, s.timed, std::move(sections));
  run.json()["energy"] = energy;
  wall.mark("finish");
  run.json()["wall"] = wall.section();
  if (!settings.quiet) {
    const std::string out = w.table(run.json(), s, run.warnings()) + EnergyRun::table_line(run.json()["energy"]) +
                            RunWall::line(run.json()["wall"]);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  for (const auto& line : w.failure_lines()) std::fprintf(stderr, "scalebench: error: %s\n", printable(line).c_str());
  if (settings.json_path) write_json_atomic(*settings.json_path, run.json());
}

}  // namespace

HarnessResult run_rank_harness(RankWorkload& w, const HarnessSettings& settings, const Communicator& comm) {
  RunWall wall;
  if (!settings.agreed) agree_on_configuration(comm, settings.name, settings.configuration);
  agree(comm, [&] { w.check(comm); });
  agree(comm, [&] { w.check_resources(comm); });
  RankSetup placed = w.place(comm);
  wall.mark("checks_and_placement");
  HarnessResult result;
  if (settings.dry_run) {
    w.dry_run(comm);
    result.ok = true;
    return result;
  }
  // The node at rest, before the run's back end, data and transfers load it.
  EnergyRun energy(comm, placed.gpu_pci_bus_id);
  energy.sample_idle();
  wall.mark("idle_power");
  agree(comm, [&] { w.make_backend(comm); });
  PhaseRecorder setup, rec, peer;
  w.prepare(setup);
  setup.next_repeat();
  comm.barrier();  // every rank's set-up done: the first repeat's barrier would wait for it
  wall.mark("setup");
  const RepeatLoop loop(settings.name, settings.warmup, settings.reps, comm, settings.quiet);
  Summaries s;
  energy.start_sampling();
  s.repeats = run_repeats(w, loop, settings.reps, rec, energy, wall, comm);
  RunReport& report = w.report();
  const nlohmann::json energy_section = energy.section(s.repeats, settings.warmup, report.energy_work(), rec);
  w.after_repeats(loop, peer);
  wall.mark("peers");
  s.timed = summarize_phases(rec, comm);
  s.setup = summarize_phases(setup, comm);
  s.peer = summarize_phases(peer, comm);

  nlohmann::json rank_info = report.rank_info(placed.report, rec);
  RunRecord run(settings.name, comm, rank_info, report.rank_warnings(comm, placed.report));
  report.add_sections(run, s);
  // Agreed: when rank 0 cannot finish (a full disk under --json), every rank leaves with its
  // error rather than waiting for the verdict while rank 0 frees its windows.
  agree(comm, [&] {
    if (!comm.is_root()) return;
    finish_on_root(report, run, s, settings, energy_section, wall);
    result.record = run.json();
  });
  // Every rank learns the verdict (rank 0 may have written the record).
  result.ok = comm.all(report.ok());
  return result;
}

}  // namespace scalebench
