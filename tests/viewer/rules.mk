# The viewer's tests: the pure logic under node:test, the page in Debian's chromium
# (playwright-core, web/node_modules) on profiles the CLI writes from a real run of
# tests/viewer/busy.c, and the HTML writer's output checked byte by byte.
VIEWER_BUSY      := $(BUILD)/tests/viewer/busy
VIEWER_HTML_TEST := $(BUILD)/tests/viewer/test_write_html
TESTS     += tests/viewer/test_logic.sh $(VIEWER_HTML_TEST) tests/viewer/test_view_cli.sh \
             tests/viewer/test_browser.sh
TEST_DEPS += $(VIEWER_BUSY) $(VIEWER_HTML_TEST) $(VIEWER_PAGE) $(KESTREL) $(KESTREL_SAN)

# Compiled from its absolute path, so its debug info names a file the page can embed.
$(VIEWER_BUSY): tests/viewer/busy.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o $@ $(CURDIR)/$<

$(VIEWER_HTML_TEST): tests/viewer/test_write_html.c $(LIBANALYSIS_SAN)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(LIBANALYSIS_SAN) $(ANALYSIS_LIBS)
