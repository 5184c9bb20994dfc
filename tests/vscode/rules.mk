# The VS Code extension (editors/vscode): built with npm (tsc), packaged into a .vsix
# with @vscode/vsce, its own logic tested under node:test, the package's contents
# checked against web/ (the webview loads the viewer's own files), and the package
# installed into a real VS Code (code-server in chromium) and used as a user would.
VSCODE_DIR  := editors/vscode
VSCODE_VSIX := $(BUILD)/editors/kestrel-profiler.vsix
VSCODE_SRCS := $(addprefix $(VSCODE_DIR)/,package.json package-lock.json tsconfig.json README.md .vscodeignore) \
               $(wildcard $(VSCODE_DIR)/src/*.ts $(VSCODE_DIR)/media/*.js $(VSCODE_DIR)/scripts/*.mjs) \
               web/viewer.html $(wildcard web/*.css web/*.js)
TESTS     += tests/vscode/test_unit.sh tests/vscode/test_vsix.sh tests/vscode/test_editor.sh
TEST_DEPS += $(VSCODE_VSIX) $(KESTREL) code-server

# code-server for the editor test, once, into its cache (minutes the first time: VS
# Code's native modules build from source; scripts/deps.sh installs what they need).
.PHONY: code-server
code-server:
	@scripts/code-server.sh >/dev/null

$(VSCODE_VSIX): $(VSCODE_SRCS)
	@mkdir -p $(@D)
	cd $(VSCODE_DIR) && npm run --silent build && \
	  npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository \
	    -o $(CURDIR)/$@.tmp.vsix >/dev/null
	mv $@.tmp.vsix $@
