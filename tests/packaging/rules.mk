# What ships: `kestrel --version`, the manual against --help, and the Debian package
# installed, used and removed on this machine (tests/packaging/test_deb.sh, as root), and
# the docs' picture of the viewer made from the viewer's current code.
TESTS     += tests/packaging/test_version.sh tests/packaging/test_man.sh tests/packaging/test_pictures.sh \
             tests/packaging/test_deb.sh
TEST_DEPS += $(KESTREL) $(MAN_PAGE) $(DEB) $(EXAMPLES)
