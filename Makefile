# The build for the whole tree: kernel, user programs, mkfs, disk image, tests.
# `make help` lists the targets a user types (the lines below marked `##`).
#
# The targets that need packages (qemu, test, grade, ...) first run tools/deps for their
# group, which installs what is missing when it can; their build then runs in a second make,
# so that the cross compiler and Python are looked for after that install, not before.
#
# Objects go under build/; mkfs/mkfs and fs.img are at the top, as in xv6.

.DEFAULT_GOAL := all

CPUS ?= 3
# The platform (README, "Platforms"): OpenSBI as QEMU's -bios, and the memory size.
BIOS ?= default
MEM ?= 128M
# The hart: QEMU's rv64 with the counter-overflow extension, Sscofpmf, which the profiler's
# instruction clock needs (kern/profile/iclock.cc; QEMU 7.2 leaves it off by default).
CPU ?= rv64,sscofpmf=true
BUILD := build
K := kern
U := user

# --- Toolchain -------------------------------------------------------------------------------
# TOOLPREFIX=... on the command line overrides the detection. The detection and the choice of
# Python run when a recipe first needs them (the `$(eval ...)` keeps the answer for the rest of
# this make), never while the Makefile is read, so that `make qemu` on a machine without the
# cross compiler can install it first.
TOOLPREFIX ?= $(eval TOOLPREFIX := $(shell \
	for p in riscv64-linux-gnu- riscv64-unknown-elf- riscv64-elf-; do \
	if command -v $${p}g++ >/dev/null 2>&1; then echo $$p; exit 0; fi; done))$(TOOLPREFIX)
# Without a cross compiler, a build stops here, saying what to do, instead of running the
# host's g++ with RISC-V flags.
CROSS = $(if $(TOOLPREFIX),$(TOOLPREFIX),$(error no RISC-V cross compiler (riscv64-linux-gnu-g++) \
	found: `make qemu` or `make deps` installs it))

CXX = $(CROSS)g++
LD = $(CROSS)ld
OBJCOPY = $(CROSS)objcopy
OBJDUMP = $(CROSS)objdump
NM = $(CROSS)nm
QEMU := qemu-system-riscv64
HOSTCXX := g++
# The interpreter that can import pytest/pexpect (Debian's), see tools/find-python.
PYTHON = $(eval PYTHON := $(shell tools/find-python))$(PYTHON)
# The build's own script (tools/mksymtab.py) needs only the standard library, so Debian's
# python3 runs it, without find-python's look for the tests' modules (0.3 s or more whenever a
# build links anything, as much as compiling a file).
BUILD_PYTHON = $(firstword $(wildcard /usr/bin/python3) python3)

# Flags shared by the kernel and user programs. The kernel never touches floating point
# (sstatus.FS stays Off), so both use the soft-float ABI and no libgcc.
ARCHFLAGS := -march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany -mno-relax
COMMONFLAGS := $(ARCHFLAGS) -std=c++20 -O2 -g -Wall -Wextra -Werror -ffreestanding \
	-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit -fno-common \
	-fno-stack-protector -fno-pie -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	-nostdlib -MMD -MP
KCXXFLAGS := $(COMMONFLAGS) -I$(K) $(KEXTRA)
UCXXFLAGS := $(COMMONFLAGS) -I$(K) -I$(U) $(UEXTRA)
LDFLAGS := -z max-page-size=4096 --no-warn-rwx-segments

# --- Kernel ----------------------------------------------------------------------------------
KSRCS := $(sort $(shell find $(K) -name '*.cc' -o -name '*.S'))
KOBJS := $(patsubst %,$(BUILD)/%.o,$(KSRCS))

$(BUILD)/$(K)/%.cc.o: $(K)/%.cc
	@mkdir -p $(@D)
	$(CXX) $(KCXXFLAGS) -c -o $@ $<

$(BUILD)/$(K)/%.S.o: $(K)/%.S
	@mkdir -p $(@D)
	$(CXX) $(KCXXFLAGS) -c -o $@ $<

# The kernel embeds its own symbol table (kern/lib/ksyms.h) for backtraces and the
# profiler. The table lives in the last section of the image, so linking it in moves no
# other symbol: pass 1 links without it, the table is made from pass 1, pass 2 adds it,
# and the text symbols of both passes are checked to be identical.
$(BUILD)/kernel.pass1: $(KOBJS) $(K)/kernel.ld
	$(LD) $(LDFLAGS) -T $(K)/kernel.ld -o $@ $(KOBJS)

$(BUILD)/ksyms.bin: $(BUILD)/kernel.pass1 tools/mksymtab.py tools/tern/symtab.py
	$(NM) -C -n -S --defined-only $< | $(BUILD_PYTHON) tools/mksymtab.py > $@

$(BUILD)/ksyms.o: $(BUILD)/ksyms.bin
	$(OBJCOPY) -I binary -O elf64-littleriscv -B riscv --rename-section .data=.ksyms,alloc,load,readonly,data,contents $< $@

$(BUILD)/kernel.elf: $(KOBJS) $(BUILD)/ksyms.o $(K)/kernel.ld
	$(LD) $(LDFLAGS) -T $(K)/kernel.ld -o $@.tmp $(KOBJS) $(BUILD)/ksyms.o
	@$(NM) -n $(BUILD)/kernel.pass1 | grep -i ' t ' > $(BUILD)/syms.pass1
	@$(NM) -n $@.tmp | grep -i ' t ' > $(BUILD)/syms.pass2
	@cmp -s $(BUILD)/syms.pass1 $(BUILD)/syms.pass2 || { echo "kernel symbols moved between link passes"; exit 1; }
	@mv $@.tmp $@  # in one step: a QEMU starting now never reads a half-written kernel
	$(OBJDUMP) -S $@ > $(BUILD)/kernel.asm

kernel: $(BUILD)/kernel.elf

# --- User programs ---------------------------------------------------------------------------
# Programs are sorted by kind into folders: utilities (user/bin), test programs (user/tests),
# the profiler's demo programs (user/demo), benchmarks (user/bench), and each lab's helper
# programs (labs/LAB/user). A program is a file NAME.cc or a folder NAME/ whose .cc files are
# linked together; either way it becomes build/user/_NAME and, in fs.img, /NAME (xv6's rule).
ULIBSRCS := $(sort $(wildcard $(U)/lib/*.cc $(U)/lib/*.S))
ULIBOBJS := $(patsubst %,$(BUILD)/%.o,$(ULIBSRCS))
UPROGDIRS := $(U)/bin $(U)/tests $(U)/demo $(U)/bench $(sort $(wildcard labs/*/user))
# Every program's source: a file, or a folder (its name without the trailing slash).
UPROGSRCS := $(sort $(wildcard $(addsuffix /*.cc,$(UPROGDIRS))) \
	$(patsubst %/,%,$(wildcard $(addsuffix /*/,$(UPROGDIRS)))))
uprog_name = $(basename $(notdir $(1)))
uprog_srcs = $(if $(filter %.cc,$(1)),$(1),$(sort $(wildcard $(1)/*.cc)))
uprog_objs = $(patsubst %,$(BUILD)/%.o,$(call uprog_srcs,$(1)))
UPROGS := $(foreach p,$(UPROGSRCS),$(BUILD)/$(U)/_$(call uprog_name,$(p)))
UOBJS := $(foreach p,$(UPROGSRCS),$(call uprog_objs,$(p)))
# Two programs of one name would be one file in fs.img.
UDUPS := $(strip $(foreach n,$(sort $(UPROGS)),$(if $(word 2,$(filter $(n),$(UPROGS))),$(notdir $(n)))))
$(if $(UDUPS),$(error two user programs have the name $(UDUPS:_%=%)))

$(BUILD)/$(U)/%.cc.o: $(U)/%.cc
	@mkdir -p $(@D)
	$(CXX) $(UCXXFLAGS) -c -o $@ $<

$(BUILD)/$(U)/%.S.o: $(U)/%.S
	@mkdir -p $(@D)
	$(CXX) $(UCXXFLAGS) -c -o $@ $<

$(BUILD)/labs/%.cc.o: labs/%.cc
	@mkdir -p $(@D)
	$(CXX) $(UCXXFLAGS) -c -o $@ $<

# Each program carries its own sorted, demangled symbol table (kern/lib/symtab.h format) in
# a non-loaded section, .symtab.sorted, for the profiler's symbolization. The copy on the
# disk has no debug information (the .elf beside it keeps it, for gdb).
define UPROG_RULE
$(BUILD)/$(U)/_$(call uprog_name,$(1)): $(call uprog_objs,$(1)) $(ULIBOBJS) $(U)/user.ld tools/mksymtab.py tools/tern/symtab.py
	$$(LD) $$(LDFLAGS) -T $(U)/user.ld -o $$@.elf $(call uprog_objs,$(1)) $(ULIBOBJS)
	$$(NM) -C -n -S --defined-only $$@.elf | $$(BUILD_PYTHON) tools/mksymtab.py > $$@.sym
	$$(OBJCOPY) --strip-debug --add-section .symtab.sorted=$$@.sym --set-section-flags .symtab.sorted=contents,readonly $$@.elf $$@
endef
$(foreach p,$(UPROGSRCS),$(eval $(call UPROG_RULE,$(p))))

# --- mkfs and the disk image -----------------------------------------------------------------
HOSTCXXFLAGS := -std=c++20 -O2 -g -Wall -Wextra -Werror -I$(K)

MKFSSRCS := $(wildcard mkfs/*.cc)
mkfs/mkfs: $(MKFSSRCS) $(wildcard mkfs/*.h) $(K)/abi/fs_format.h $(K)/abi/param.h
	@mkdir -p $(BUILD)
	$(HOSTCXX) $(HOSTCXXFLAGS) -MMD -MF $(BUILD)/mkfs.d -o $@ $(MKFSSRCS)

FSFILES := README.md $(UPROGS)
fs.img: mkfs/mkfs $(FSFILES)
	cp README.md $(BUILD)/README
	mkfs/mkfs $@ $(BUILD)/README $(UPROGS)

# --- Running ---------------------------------------------------------------------------------
QEMUOPTS = -machine virt -cpu $(CPU) -bios $(BIOS) -kernel $(BUILD)/kernel.elf -m $(MEM) -smp $(CPUS) \
	-nographic -global virtio-mmio.force-legacy=false \
	-drive file=fs.img,if=none,format=raw,id=x0 \
	-device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0 $(QEMUEXTRA)

all: $(BUILD)/kernel.elf fs.img ## build the kernel, the user programs and fs.img (installs nothing)

# The exact QEMU command line and the toolchain's prefix, for the Python code
# (tools/tern/toolchain.py), which asks rather than repeats them.
print-qemu:
	@echo $(QEMU) $(QEMUOPTS)

print-toolprefix:
	@echo $(CROSS)

# `make all` in a second make: see the top of this file.
BUILD_AFTER_DEPS = @$(MAKE) --no-print-directory $(BUILD_JOBS) all

qemu: deps-boot ## install what booting needs if missing, build, boot [CPUS=n] (Ctrl-a x quits)
	$(BUILD_AFTER_DEPS)
	@tools/check-platform --qemu '$(QEMU)' --bios '$(BIOS)' --extra '-cpu $(CPU) $(QEMUEXTRA)'
	$(QEMU) $(QEMUOPTS)

# QEMU waits for gdb on a port free right now (or GDBPORT=n), so two users or two clones
# never collide; .gdbport tells .gdbinit which one.
qemu-gdb: deps-debug ## the same, QEMU waiting for gdb-multiarch (see .gdbinit)
	$(BUILD_AFTER_DEPS)
	@port=$${GDBPORT:-$$(PYTHONPATH=tools $(PYTHON) -m tern.ports)}; \
	echo "target remote 127.0.0.1:$$port" > .gdbport; \
	echo "*** QEMU is waiting for gdb on port $$port: run 'gdb-multiarch' in this directory"; \
	$(QEMU) $(QEMUOPTS) -S -gdb tcp:127.0.0.1:$$port

# --- The profiling demos (lectures/README.md) ----------------------------------------------
# `make demo DEMO=name` runs one of the lecture demos listed by `make demo-list` (the table
# is in tools/demo) and writes every view of its profile to build/demo/NAME/. DEMO_CMD runs
# any shell command instead (views in build/demo/custom/); DEMO_RATE and DEMO_CPUS override
# the demo's sampling rate and number of harts.
DEMO ?=
DEMO_CMD ?=
DEMO_RATE ?=
DEMO_CPUS ?=
DEMO_ARGS = $(strip $(DEMO) $(if $(DEMO_CMD),--command '$(DEMO_CMD)') \
	$(if $(DEMO_RATE),--rate $(DEMO_RATE)) $(if $(DEMO_CPUS),--cpus $(DEMO_CPUS)))

# tools/demo checks the name before it builds anything (through tools/profget).
demo: deps-grade ## a lecture demo of the profiler [DEMO=name]
	$(strip tools/demo $(DEMO_ARGS))

demo-list: ## the lecture demos' names
	@tools/demo list

# Every view of a profile already on disk, without QEMU: build/demo/report/.
demo-report: ## every view of a profile on disk [PROFILE=file]
	@test -n "$(PROFILE)" || { echo "usage: make demo-report PROFILE=profile.json" >&2; exit 2; }
	tools/demo --views $(PROFILE)

# --- Packages --------------------------------------------------------------------------------
# deps-GROUP installs GROUP's missing Debian packages when it can (root or sudo without a
# password), or stops with the command that would. The groups are in tools/deps.
DEPS_GROUPS := boot debug grade test
DEPS_TARGETS := $(addprefix deps-,$(DEPS_GROUPS))

$(DEPS_TARGETS):
	@tools/deps check $(@:deps-%=%)

deps: ## install every package the project uses (make qemu and make test do it themselves)
	tools/deps check test

deps-check: deps-test

# --- Tests -----------------------------------------------------------------------------------
# The pytest suites run on TEST_JOBS pytest-xdist workers (TEST_JOBS=1 runs them one after
# another), and the build and the host tests compile TEST_JOBS files at a time. The default is
# one worker more than the machine has cores: a worker whose test waits for a hang to show, a
# sleep or a timeout leaves its core to the others. Each worker boots its own machines; tests
# that share an expensive fixture, such as a lab's starter tree, are kept on one worker by an
# xdist_group mark (the loadgroup distribution). After the GoogleTest tests, one pytest runs
# all the rest: the host tests, the profile tools' tests, the QEMU suite (with the bench's
# smoke pass, tests/qemu/test_bench_smoke.py), the grader's and the labs', so that the
# workers fill their gaps with one another's tests.
# The cores available to make, counted as the grader counts them (its CPU affinity, no more
# than its cgroup's quota: usable_cores() in tools/tern/grade/grader.py), or nproc's count
# where Debian's python3 is not installed yet. Asked once, when first used.
NCORES = $(eval NCORES := $(shell /usr/bin/python3 -c 'import sys; sys.path.insert(0, "tools"); \
	from tern.grade.grader import usable_cores; print(usable_cores())' 2>/dev/null \
	|| nproc 2>/dev/null || echo 1))$(NCORES)
TEST_JOBS ?= $(eval TEST_JOBS := $(shell echo $$(($(NCORES) + 1))))$(TEST_JOBS)
TEST_PARALLEL = $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadgroup,-p no:xdist)
# The tests' build compiles TEST_JOBS files at a time too: a fresh clone builds in 20 s
# instead of 30 s on two cores. Under `make -jN test` the second makes share the outer
# make's N jobs instead (a -j of their own would leave its job server, with a warning).
SUB_JOBS = $(if $(filter -j%,$(MFLAGS)),,-j$(TEST_JOBS))
test test-host: BUILD_JOBS = $(SUB_JOBS)
# What the host tests are told when they run outside tests/host/Makefile (as its `run` does).
HOST_TEST_ENV = MKFS=$(CURDIR)/build/host/mkfs JSON_SAMPLE=$(CURDIR)/build/host/json_sample.json

test: deps-test ## install what the tests need if missing, then run every test [TEST_JOBS=N]
	@$(MAKE) --no-print-directory format-check
	$(BUILD_AFTER_DEPS)
	$(MAKE) $(SUB_JOBS) -C tests/host unit
	$(HOST_TEST_ENV) $(PYTHON) -m pytest -q -rfEs $(TEST_PARALLEL) tests/host tests/tools \
		tests/qemu tests/grader labs $(PYTEST_ARGS)

# The tests that need no QEMU suite: tests/host and tests/tools (some of those boot the system
# once), for a quick check of the host tools.
test-host: deps-test ## the same, without the QEMU tests (tests/qemu, labs)
	$(BUILD_AFTER_DEPS)
	$(MAKE) $(SUB_JOBS) -C tests/host run PYTEST_PARALLEL='$(TEST_PARALLEL)'
	$(PYTHON) -m pytest -q -rfEs tests/tools $(PYTEST_ARGS)

test-tools: deps-test ## only the tests of the profile tools (tests/tools)
	$(PYTHON) -m pytest -q -rfEs tests/tools $(PYTEST_ARGS)

# --- Habits ----------------------------------------------------------------------------------
# The C++ files follow .clang-format; `make test` checks it first. FORMAT_SRCS may be set to
# check or format other files.
FORMAT_SRCS ?= $(sort $(shell find kern user mkfs labs tests/host -name '*.cc' -o -name '*.h'))

format: ## format every C++ file as .clang-format says
	clang-format -i $(FORMAT_SRCS)

format-check: ## fail, showing where, if a C++ file is not formatted (make format fixes it)
	@command -v clang-format >/dev/null || \
		{ echo "format-check: no clang-format: make deps installs it" >&2; exit 1; }
	@clang-format --dry-run -Werror $(FORMAT_SRCS) || \
		{ echo "format-check: the files above are not formatted: make format fixes them" >&2; exit 1; }

compdb: ## compile_commands.json, each file's compiler flags for an editor (clangd)
	@$(PYTHON) tools/compdb

clean: ## remove everything the build made
	rm -rf $(BUILD) fs.img mkfs/mkfs mkfs/*.d .gdbport
	$(MAKE) -C tests/host clean

# The targets marked `##`, with their text.
help: ## this list
	@echo "make TARGET, where TARGET is one of:"
	@sed -n 's/^\([a-z][a-z-]*\):[^#]*## */\1 /p' $(firstword $(MAKEFILE_LIST)) | \
		while read -r target text; do printf '  %-12s %s\n' "$$target" "$$text"; done

.PHONY: all kernel print-qemu print-toolprefix qemu qemu-gdb deps deps-check $(DEPS_TARGETS)
.PHONY: test test-host format format-check compdb
.PHONY: test-tools demo demo-list demo-report clean help
.DELETE_ON_ERROR:
# Keep the user programs' objects (intermediate files of the _% rule) for incremental builds.
.SECONDARY: $(UOBJS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- Grading ---------------------------------------------------------------------------------
# The grader (tools/grade) runs the tests that carry points (labs/NAME/, and the pseudo-labs
# of tests/qemu/), one QEMU per test, in parallel, and ends with `Score: N/M` (exit status 0
# only for full marks). Results also go to build/grade/: results.json (Gradescope's format),
# junit.xml, logs/ (failed consoles).
#
#   make grade [LAB=name] [TEST=substring] [GRADE_JOBS=n] [GRADE_TIMEOUT_SCALE=x]
#   make grade-list [LAB=name]          the graded tests and their points
#   make grade-flaky [N=3] [LAB=name]   run N times; fails unless every run gives the same results
#   make autograder [LAB=profile] [STARTER=dir]   Gradescope bundle: build/autograder/
#   make handin [LAB=profile]           zip your last commit for upload (refuses uncommitted work)
GRADE_LAB := $(or $(LAB),profile)
GRADE_SELECT = $(if $(LAB),--lab '$(LAB)') $(if $(TEST),--test '$(TEST)') \
	$(if $(GRADE_JOBS),--jobs '$(GRADE_JOBS)') $(GRADE_ARGS)

grade: deps-grade ## run the graded tests: Score: N/M [LAB=name] [TEST=substring]
	@$(PYTHON) tools/grade $(GRADE_SELECT)

grade-list: deps-grade ## the graded tests and their points [LAB=name]
	@$(PYTHON) tools/grade --list $(GRADE_SELECT)

grade-flaky: deps-grade ## grade N times, failing unless all runs agree [N=3]
	@$(PYTHON) tools/grade --repeat $(or $(N),3) $(GRADE_SELECT)

autograder: deps-grade ## the Gradescope bundle in build/autograder/ [LAB=profile]
	@PYTHONPATH=tools $(PYTHON) -m tern.grade.autograder --lab '$(GRADE_LAB)' \
		$(if $(STARTER),--starter '$(STARTER)')

handin: ## zip your last commit for upload [LAB=profile]
	@PYTHONPATH=tools $(PYTHON) -m tern.grade.handin --lab '$(GRADE_LAB)'

.PHONY: grade grade-list grade-flaky autograder handin
# --- end of Grading --------------------------------------------------------------------------

# --- Labs ------------------------------------------------------------------------------------
# make starter LAB=profile DEST=dir: the tree a student starts the lab from (labs/LAB/README.md
# is its handout): every solution region of the lab replaced by its starter code, as a new git
# repository with one commit (tools/mkstarter explains the markers).
starter: ## the student's tree of a lab [LAB=profile DEST=dir]
	@test -n "$(LAB)" -a -n "$(DEST)" || { echo "usage: make starter LAB=profile DEST=dir" >&2; exit 2; }
	@test -x tools/mkstarter || { echo "make starter: this tree has no lab generator (is it a starter?)" >&2; exit 2; }
	tools/mkstarter --lab $(LAB) --dest $(DEST)

.PHONY: starter
# --- End of labs -----------------------------------------------------------------------------

# --- Benchmarks ------------------------------------------------------------------------------
# tools/bench runs them (tools/tern/bench/); the README's "Benchmarks" section explains them.
#   make bench [BENCH_ARGS="--runs 5 --only syscalls,profiler"]
#        every benchmark, several runs each: a table, build/bench/results.json, table.md
#   make bench-smoke    one short run of each (about a minute), so that they keep working
bench: deps-grade ## every benchmark, several runs each [BENCH_ARGS=...]
	$(BUILD_AFTER_DEPS)
	BENCH_COMMAND="make bench$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		$(PYTHON) tools/bench $(BENCH_ARGS)

bench-smoke: deps-grade ## one short run of each benchmark
	$(BUILD_AFTER_DEPS)
	BENCH_COMMAND="make bench-smoke" $(PYTHON) tools/bench --smoke

.PHONY: bench bench-smoke
# --- End of benchmarks -----------------------------------------------------------------------
