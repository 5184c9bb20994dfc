/* The thread registry on its own: a registration takes the lowest free slot, so a
 * program that makes and ends threads all its life keeps its slots (and the engines'
 * state of each) packed at the start of the table, and the high-water mark that the
 * engines' walks stop at stays at the most threads registered at once. The slots and
 * an engine's table of one entry per slot are mapped a block of 64 slots at a time, as
 * registrations reach them: 66 slots in use map two blocks of each, not 256. */
#include "check.h"
#include "runtime/cpu/registry.h"
#include "runtime/rtblocks.h"

struct engine_entry {
    char state[4096]; /* an engine's per-thread state: a page each */
};
RTBLOCKS(engine_table, struct engine_entry, REGISTRY_SLOTS, 64);

static size_t reg(void)
{
    struct reg_slot *s = registry_register(-1, "t", 0, 0);
    CHECK(s != NULL);
    return s ? registry_slot_index(s) : (size_t)-1;
}

/* The calling thread's registration ends; its slot waits for the engine's release. */
static void unreg(void)
{
    CHECK(registry_unregister() == 0);
}

static void release(size_t i)
{
    registry_lock();
    registry_release(registry_slot(i));
    registry_unlock();
}

int main(void)
{
    CHECK(registry_open() == 0);
    size_t hi0 = registry_slots_hi();

    /* Registered, ended and released 2000 times in a row: always slot 0. */
    size_t other = 0;
    for (int i = 0; i < 2000; i++) {
        size_t k = reg();
        other += k != 0;
        unreg();
        release(k);
    }
    CHECKF(other == 0, "%zu of 2000 registrations took a slot other than 0", other);
    CHECK(registry_slots_hi() == (hi0 > 1 ? hi0 : 1));

    /* A slot still draining is not free: the next registration takes the one after;
     * once both are released, slot 0 again. */
    size_t a = reg();
    unreg();
    size_t b = reg();
    unreg();
    CHECKF(a == 0 && b == 1, "slots %zu then %zu", a, b);
    release(a);
    release(b);
    CHECK(reg() == 0);
    unreg();
    release(0);
    CHECK(registry_slots_hi() == (hi0 > 2 ? hi0 : 2));

    /* An engine's table: nothing mapped until a registration; then the block of its
     * slot. 66 slots draining at once (one thread, registered again and again): the
     * 65th maps the second block, and nothing past it is mapped. */
    CHECK(rtblocks_mapped(&engine_table) == 0);
    CHECK(registry_add_table(&engine_table) == 0);
    CHECKF(rtblocks_mapped(&engine_table) == 64 * sizeof(struct engine_entry),
           "%zu bytes mapped for the slots used before", rtblocks_mapped(&engine_table));
    for (size_t k = 0; k < 66; k++) {
        size_t i = reg();
        CHECKF(i == k, "slot %zu, want %zu", i, k);
        CHECK(rtblocks_at(&engine_table, i) != NULL && registry_slot(i) != NULL);
        unreg();
    }
    CHECKF(rtblocks_mapped(&engine_table) == 2 * 64 * sizeof(struct engine_entry),
           "%zu bytes mapped for 66 slots", rtblocks_mapped(&engine_table));
    CHECK(rtblocks_at(&engine_table, 128) == NULL && registry_slot(128) == NULL);
    CHECK(registry_slots_hi() == 66);
    for (size_t k = 0; k < 66; k++)
        release(k);
    registry_close();
    return check_exit();
}
