// profile: the JSON of /proc/profile, parsed one sample at a time.
//
// Reading /proc/profile gives a JSON array, one object per sample, with every address
// already named:
//
//   {"pid":3,"tid":3,"comm":"spin","timestamp":123,"hart":0,"mode":"user","samples":[
//     {"address":1234,"symbol":"hot","kernel":false}, ...]}
//
// The parser reads it from a Stream one character at a time and keeps only the sample it is
// in the middle of, so the size of the profile does not matter.
#pragma once

#include "stream.h"

namespace prof {

constexpr const char *PROFILE_PATH = "/proc/profile";
constexpr int NAME_MAX = 96;    // longer names are cut to 95 bytes, ending in "..."
constexpr int MAX_FRAMES = 64;  // more than the kernel records per sample (32)
constexpr int COMM_MAX = 16;    // a program's name, as the kernel keeps it (Proc::name)

struct Frame {
  char name[NAME_MAX];
  bool kernel;
};

// One sample, as much of it as the report needs. The parser sets every field it uses.
struct Sample {
  int pid;
  char comm[COMM_MAX];
  bool wait;  // "mode":"wait": the process was asleep, off the CPU
  int nframes;
  Frame frames[MAX_FRAMES];
};

// A recursive-descent parser for the JSON of /proc/profile, reading from a Stream. It
// accepts any valid JSON with the documented shape, in any key order, and skips keys it
// does not know, so extra fields in a later kernel do not break it. Every method returns
// false on malformed input; the caller reports where.
class ProfileParser {
 public:
  ProfileParser(Stream &in, Sample &scratch) : m_in(in), m_sample(scratch) {}

  // Calls visit(sample) for each sample in the array taken on the CPU. Wait samples (a
  // process asleep) are skipped: the console's reports show where the processor went, and
  // the host's (tools/profconv --cpu off|both) show the waits. False if the text is not a
  // valid profile.
  template <typename Visit>
  bool each_sample(Visit &&visit);

 private:
  void skip_space();
  bool expect(char want);
  bool at_end();
  bool string(char *buf, int cap);
  bool number(unsigned long *out);
  bool literal(const char *word);
  bool boolean(bool *out);
  bool skip_value(int depth = 0);
  template <typename Item>
  bool items(char close, Item &&item);
  template <typename Member>
  bool object(Member &&member);
  bool frame(Frame &f);
  bool frames(Sample &s);
  bool sample(Sample &s);

  Stream &m_in;
  Sample &m_sample;  // reused for every sample: the parser holds one at a time
};

// The two templates that each_sample needs, so their bodies are here rather than in json.cc.

// The items of an array or object after its opening bracket, separated by ',' and ended by
// `close`: item() parses one, and returns false on bad input.
template <typename Item>
bool ProfileParser::items(char close, Item &&item) {
  skip_space();
  if (m_in.peek() == close) {
    m_in.get();
    return true;
  }
  for (;;) {
    if (!item()) return false;
    skip_space();
    int c = m_in.get();
    if (c == close) return true;
    if (c != ',') return false;
  }
}

template <typename Visit>
bool ProfileParser::each_sample(Visit &&visit) {
  return expect('[') &&
         items(']',
               [&] {
                 if (!sample(m_sample)) return false;
                 if (!m_sample.wait) visit(static_cast<const Sample &>(m_sample));
                 return true;
               }) &&
         at_end();
}

}  // namespace prof
