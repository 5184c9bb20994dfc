# The version, the manual and the Debian package (packaging/):
#   make man    build/man/kestrel.1: kestrel(1), made from the binary's --help texts
#   make deb    build/deb/kestrel_VERSION_ARCH.deb (dpkg-deb; lintian when installed)
#   make pictures  docs/viewer.png from the viewer as it is now
# `make install` installs the manual, the bash completion and the docs with the rest.

# `kestrel --version`: packaging/build-info.sh rewrites the header only when what it
# says changes (another commit, uncommitted changes, another day), so a build
# recompiles one file for it, and only then.
KESTREL_BUILD_H := $(BUILD)/gen/kestrel_build.h
.PHONY: kestrel-build-info
$(KESTREL_BUILD_H): kestrel-build-info
	@mkdir -p $(@D)
	@packaging/build-info.sh $(VERSION) . > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/cli/version.o $(BUILD)/cli-san/version.o: $(KESTREL_BUILD_H)
$(BUILD)/cli/version.o $(BUILD)/cli-san/version.o: ANALYSIS_CFLAGS += -I$(BUILD)/gen

# The manual, from the help texts of the binary just built (packaging/man.sh).
MAN_PAGE := $(BUILD)/man/kestrel.1
.PHONY: man
man: $(MAN_PAGE)
$(MAN_PAGE): $(KESTREL) packaging/man.sh packaging/help2roff.awk
	@mkdir -p $(@D)
	packaging/man.sh $(KESTREL) > $@.tmp
	mv $@.tmp $@

DOC_FILES := README.md BENCHMARKS.md $(wildcard docs/*.md docs/*.png)
COMPLETION := packaging/kestrel.bash-completion

.PHONY: install-extras uninstall-extras
install: install-extras
install-extras: $(MAN_PAGE)
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/kestrel \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(MAN_PAGE) $(DESTDIR)$(PREFIX)/share/man/man1/kestrel.1
	install -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kestrel
	install -m 644 $(DOC_FILES) $(DESTDIR)$(PREFIX)/share/doc/kestrel/
uninstall: uninstall-extras
uninstall-extras:
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/kestrel.1 \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kestrel
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/kestrel

# The package: everything `make install PREFIX=/usr` installs, staged, stripped, its
# Depends computed by dpkg-shlibdeps from what the binaries link (packaging/deb.sh).
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB      := $(BUILD)/deb/kestrel_$(VERSION)_$(DEB_ARCH).deb
DEB_ROOT := $(BUILD)/deb/root
# `make deb` installs what the build needs first (scripts/deps.sh --package), then
# builds in a second make, as `make demo` does.
.PHONY: deb
deb:
	@scripts/deps.sh --package
	@$(MAKE) --no-print-directory $(DEB)
# Everything `all` makes is a prerequisite, so the `make install` inside finds it made
# (a parallel make would otherwise build the same files twice at once).
$(DEB): $(KESTREL) $(LIBKESTREL_SO) $(LIBKESTREL_A) $(LIBKESTREL_ANALYSIS) $(EXAMPLES) $(MAN_PAGE) \
        $(COMPLETION) $(DOC_FILES) include/kestrel.h include/kestrel_analysis.h \
        scripts/kestrel.pc.in scripts/kestrel-analysis.pc.in $(wildcard packaging/*)
	rm -rf $(DEB_ROOT)
	$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(abspath $(DEB_ROOT)) >/dev/null
	packaging/deb.sh $(DEB_ROOT) $(VERSION) $(DEB_ARCH) $@

# The docs' picture of the viewer, from the viewer as it is now (scripts/pictures.mjs);
# tests/packaging/test_pictures.sh fails when web/ changed since.
.PHONY: pictures
pictures: $(KESTREL) $(EXAMPLES)
	node scripts/pictures.mjs
