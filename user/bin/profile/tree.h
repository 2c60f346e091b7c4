// profile: the call tree of the samples, for `profile tree`.
//
// Each sample is a path from the outermost caller (main, or _start) to the innermost
// frame. The tree merges the paths: a node is one call path, its count the samples whose
// stacks begin with that path (inclusive: time in the call and in all it called), its self
// count the samples whose stacks end there. So a node's count is its self count plus its
// children's counts, and the root's is every sample. Printed callers above callees, as
// `perf report -g caller` does, children busiest first, with the children under a
// threshold summed on one line.
//
// The tree grows with the number of different call paths, not with the samples; a fixed
// table holds it, and a sample whose path would need a node beyond it stops where the table
// ends (the report says how many did).
#pragma once

#include "json.h"
#include "tally.h"

namespace prof {

class CallTree {
 public:
  // per_process: the root is every process, with a node per process under it; otherwise
  // the root is the one process the report is about. False if out of memory.
  bool init(bool per_process);
  void add(const Sample &s);
  int samples() const { return m_nodes == nullptr ? 0 : m_nodes[0].count; }
  // Prints the tree, leaving out the calls with fewer than min_tenths tenths of a percent
  // of the samples. `root` names the root.
  void print(int min_tenths, const char *root, const Processes &procs);

 private:
  struct Node {
    const FunctionCount *fn;  // nullptr: the root, or a process's node
    int pid;                  // a process's node: its pid; otherwise 0
    int parent;
    int first_child;  // -1: none
    int next_sibling;
    int count;
    int self;
  };
  static constexpr int MAX_NODES = 16384;
  static constexpr int SLOTS = MAX_NODES * 2;  // of the hash table, keyed by (parent, fn, pid)

  int child(int parent, const FunctionCount *fn, int pid);
  void sort_children(int parent);
  void name(int node, const Processes &procs, char *out, int cap) const;
  bool shown(int node, int min_tenths) const;
  void line(int node, int depth, const Processes &procs) const;
  void left_out_line(int parent, int depth, int min_tenths) const;

  Tally m_names;  // one address for each function's name
  Node *m_nodes = nullptr;
  int *m_slots = nullptr;  // node indices, -1 free
  int m_used = 0;
  int m_cut = 0;  // samples that stopped short because the table was full
  bool m_per_process = false;
  const char *m_root = nullptr;  // the root's name, while printing
};

}  // namespace prof
