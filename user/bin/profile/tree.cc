// profile tree [-t PCT] [PID]: the call tree of the samples (tree.h).
#include "tree.h"

#include "lib/user.h"
#include "profile.h"

namespace prof {
namespace {

int tenths_of_percent(int part, int total) {
  return total == 0 ? 0 : static_cast<int>((part * 1000L + total / 2) / total);
}

}  // namespace

bool CallTree::init(bool per_process) {
  m_per_process = per_process;
  if (!m_names.init()) return false;
  m_nodes = static_cast<Node *>(malloc(MAX_NODES * sizeof(Node)));
  m_slots = static_cast<int *>(malloc(SLOTS * sizeof(int)));
  if (m_nodes == nullptr || m_slots == nullptr) return false;
  for (int i = 0; i < SLOTS; i++) m_slots[i] = -1;
  m_nodes[0] = Node{nullptr, 0, -1, -1, -1, 0, 0};
  m_used = 1;
  return true;
}

void CallTree::add(const Sample &s) {
  m_nodes[0].count++;
  int at = 0;
  if (m_per_process) {
    at = child(0, nullptr, s.pid);
    if (at < 0) {
      m_cut++;
      return;
    }
    m_nodes[at].count++;
  }
  for (int i = s.nframes - 1; i >= 0; i--) {
    int next = child(at, m_names.function(s.frames[i]), 0);
    if (next < 0) {
      m_cut++;
      return;
    }
    at = next;
    m_nodes[at].count++;
  }
  m_nodes[at].self++;
}

// The child of `parent` for (fn, pid), made if it is new; -1 if the table is full.
int CallTree::child(int parent, const FunctionCount *fn, int pid) {
  unsigned long key = reinterpret_cast<unsigned long>(fn) * 31 + static_cast<unsigned>(pid);
  unsigned h = static_cast<unsigned>((key ^ (key >> 17)) * 2654435761u + parent * 40503u);
  for (unsigned i = h % SLOTS;; i = (i + 1) % SLOTS) {
    int n = m_slots[i];
    if (n < 0) {
      if (m_used == MAX_NODES) return -1;
      n = m_used++;
      m_nodes[n] = Node{fn, pid, parent, -1, m_nodes[parent].first_child, 0, 0};
      m_nodes[parent].first_child = n;
      m_slots[i] = n;
      return n;
    }
    const Node &node = m_nodes[n];
    if (node.parent == parent && node.fn == fn && node.pid == pid) return n;
  }
}

// Orders the children of `parent` busiest first (an insertion sort of the list: a node has
// few children, and this runs once per node).
void CallTree::sort_children(int parent) {
  int sorted = -1;
  for (int c = m_nodes[parent].first_child; c >= 0;) {
    int next = m_nodes[c].next_sibling;
    int *link = &sorted;
    while (*link >= 0 && m_nodes[*link].count >= m_nodes[c].count)
      link = &m_nodes[*link].next_sibling;
    m_nodes[c].next_sibling = *link;
    *link = c;
    c = next;
  }
  m_nodes[parent].first_child = sorted;
}

void CallTree::name(int node, const Processes &procs, char *out, int cap) const {
  const Node &n = m_nodes[node];
  if (n.fn != nullptr)
    snprintf(out, cap, "%s%s", n.fn->kernel ? "[k] " : "", n.fn->name);
  else
    snprintf(out, cap, "%s (pid %d)", procs.comm(n.pid), n.pid);
}

bool CallTree::shown(int node, int min_tenths) const {
  return m_nodes[node].count * 1000L >= static_cast<long>(min_tenths) * m_nodes[0].count;
}

// One node: its share, its count, its self count, and its name indented by depth.
void CallTree::line(int node, int depth, const Processes &procs) const {
  const Node &n = m_nodes[node];
  char label[NAME_MAX + 32];
  if (node == 0)
    label[0] = '\0';
  else
    name(node, procs, label, sizeof(label));
  int pct = tenths_of_percent(n.count, m_nodes[0].count);
  printf("%3d.%d%% %7d %6d ", pct / 10, pct % 10, n.count, n.self);
  for (int i = 0; i < depth; i++) printf("  ");
  printf("%s\n", node == 0 ? m_root : label);
}

// The line that sums the children of `parent` under the threshold, if there are any.
void CallTree::left_out_line(int parent, int depth, int min_tenths) const {
  int count = 0, samples = 0;
  for (int c = m_nodes[parent].first_child; c >= 0; c = m_nodes[c].next_sibling) {
    if (shown(c, min_tenths)) continue;
    count++;
    samples += m_nodes[c].count;
  }
  if (count == 0) return;
  int pct = tenths_of_percent(samples, m_nodes[0].count);
  printf("%3d.%d%% %7d %6s ", pct / 10, pct % 10, samples, "-");
  for (int i = 0; i <= depth; i++) printf("  ");
  printf("(%d more under %d.%d%%)\n", count, min_tenths / 10, min_tenths % 10);
}

void CallTree::print(int min_tenths, const char *root, const Processes &procs) {
  m_root = root;
  for (int i = 0; i < m_used; i++) sort_children(i);
  printf("%7s %7s %6s  %s\n", "incl %", "incl", "self", "call (callers above callees)");
  // A walk down the tree without recursion (the user stack is one page): print a node,
  // go to its first child shown; when a node has no more children to show, print the line
  // of those left out and go on with the next sibling shown, up the tree.
  int node = 0, depth = 0;
  line(0, 0, procs);
  int next = m_nodes[0].first_child;
  for (;;) {
    if (next >= 0 && shown(next, min_tenths)) {
      node = next;
      depth++;
      line(node, depth, procs);
      next = m_nodes[node].first_child;
      continue;
    }
    left_out_line(node, depth, min_tenths);
    if (node == 0) break;
    next = m_nodes[node].next_sibling;
    node = m_nodes[node].parent;
    depth--;
  }
  if (m_cut > 0)
    printf("%d samples stop short of their innermost call: more than %d call paths\n", m_cut,
           MAX_NODES);
}

int tree(int pid, int min_tenths) {
  CallTree tree;
  const Processes &procs = processes;
  if (!tree.init(pid == ANY_PID)) fail("out of memory");
  if (!read_profile(pid, false, [&](const Sample &s) { tree.add(s); })) return 1;
  char root[COMM_MAX + 32];
  if (pid == ANY_PID)
    strcpy(root, "all processes");
  else
    snprintf(root, sizeof(root), "%s (pid %d)", procs.comm(pid), pid);
  if (tree.samples() == 0) {
    printf("no samples of %s\n", root);
    return 0;
  }
  printf("call tree of %s: %d samples; calls under %d.%d%% left out\n", root, tree.samples(),
         min_tenths / 10, min_tenths % 10);
  tree.print(min_tenths, root, procs);
  return 0;
}

}  // namespace prof
