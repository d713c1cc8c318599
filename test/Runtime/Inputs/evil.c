/* A library that must never be loaded: its constructor leaves a marker file
 * (named by LINNET_EVIL_MARKER) the moment it is mapped. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void mark(void) {
  const char *p = getenv("LINNET_EVIL_MARKER");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (f) {
    fputs("loaded\n", f);
    fclose(f);
  }
}

void linnet_entry_forward(void **args) { (void)args; }
