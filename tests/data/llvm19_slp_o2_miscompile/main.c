#include <math.h>
#include <stdio.h>
void layer_norm(void**);
void layer_norm_ref(void**);
int main() {
    float X[32], g[8], b[8], o[32], r[32];
    for (int i = 0; i < 32; i++) X[i] = (float)((i * 37) % 11) - 5;
    for (int i = 0; i < 8; i++) {
        g[i] = 1;
        b[i] = 0;
    }
    void* a[4] = {X, g, b, o};
    void* c[4] = {X, g, b, r};
    layer_norm(a);
    layer_norm_ref(c);
    float md = 0;
    for (int i = 0; i < 32; i++) {
        float d = fabsf(o[i] - r[i]);
        if (d > md) md = d;
    }
    printf("maxdiff %g\n", md);
    return md > 1e-4;
}
