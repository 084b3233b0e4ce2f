#include "lazy_load.h"
#include <dlfcn.h>
#include <stdio.h>

int depthpose_lazy_load(struct depthpose_lazy_library *lib, char *error, size_t size) {
    pthread_mutex_lock(&lib->lock);
    if (lib->state == 0) {
        void *h = NULL;
        for (size_t i = 0; i < lib->count && !h; i++) h = dlopen(lib->names[i], RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (!h) {
            snprintf(lib->failure, sizeof lib->failure, "%s could not be loaded (%s); install the %s package", lib->title, dlerror(), lib->package);
        } else {
            // The table is a struct of function pointers, one per symbol, in order.
            void **slots = (void **)lib->table;
            for (size_t i = 0; i < lib->symbol_count && !missing; i++) {
                if (!(slots[i] = dlsym(h, lib->symbols[i]))) missing = lib->symbols[i];
            }
            if (missing) snprintf(lib->failure, sizeof lib->failure, "the loaded %s lacks %s", lib->title, missing);
            else if (lib->loaded) lib->loaded(h);
        }
        lib->state = h && !missing ? 1 : -1;
    }
    int ok = lib->state == 1;
    pthread_mutex_unlock(&lib->lock);
    if (!ok && size > 0) snprintf(error, size, "%s", lib->failure);
    return ok;
}
