# The viewer: web/viewer.html with its stylesheet and scripts inlined into one page
# (build/web/viewer.html, with the placeholder @KESTREL_DATA@ where the CLI puts the
# profile), then turned into a C array of the analysis library (viewer_page[]).
VIEWER_SRCS := web/viewer.html $(wildcard web/*.css web/*.js) web/inline.awk
VIEWER_PAGE := $(BUILD)/web/viewer.html
VIEWER_C    := $(BUILD)/web/viewer_page.c
VIEWER_OBJ  := $(BUILD)/web/viewer_page.o

$(VIEWER_PAGE): $(VIEWER_SRCS)
	@mkdir -p $(@D)
	cd web && awk -f inline.awk viewer.html > ../$@.tmp
	@test "$$(grep -o '@KESTREL_DATA@' $@.tmp | wc -l)" = 1 || \
	    { echo "web/: @KESTREL_DATA@ must occur exactly once in the page" >&2; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

$(VIEWER_C): $(VIEWER_PAGE)
	@mkdir -p $(@D)
	{ echo '/* Generated from web/ by web/rules.mk: the viewer page, data placeholder inside. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'const unsigned char viewer_page[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t viewer_page_len = sizeof viewer_page;'; } > $@.tmp
	mv $@.tmp $@

$(VIEWER_OBJ): $(VIEWER_C)
	$(CC) $(ANALYSIS_CFLAGS) -c $< -o $@
