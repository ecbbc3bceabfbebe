# Part of mxcy/_rnn.pyx (textually included): the kernel argument record.

cdef enum:
    MODE_RNN_RELU = 0
    MODE_RNN_TANH = 1
    MODE_LSTM = 2
    MODE_GRU = 3


cdef struct RnnArgs:
    int dtype
    int mode
    int T                  # sequence length
    int N                  # batch
    int ni                 # input size
    int H                  # state size
    int L                  # layers
    int D                  # directions (1 or 2)
    int masks              # reserve holds dropout masks between layers
    int train              # forward: the masks were drawn (else they are set to 1)
    int req_y
    int req_hy
    int req_cy
    int req_dx
    int req_dw
    int req_dhx
    int req_dcx
    char* x
    char* w
    char* hx
    char* cx               # LSTM only
    char* y
    char* hy
    char* cy
    char* reserve
    char* dy
    char* dhy              # NULL: no gradient flows into the final states
    char* dcy
    char* dx
    char* dw
    char* dhx
    char* dcx
