/* The thread registry on its own: a registration takes the lowest free slot, so a
 * program that makes and ends threads all its life keeps its slots (and the engines'
 * state of each) packed at the start of the table, and the high-water mark that the
 * engines' walks stop at stays at the most threads registered at once. */
#include "check.h"
#include "runtime/cpu/registry.h"

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
    registry_release(&registry_slots()[i]);
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
    registry_close();
    return check_exit();
}
