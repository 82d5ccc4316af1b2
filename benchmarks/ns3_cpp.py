"""C++ shared by the ns-3 experiment scripts (compiled into ns-3's process with cppyy.cppdef)."""

# The members every experiment subclass of an ns-3 congestion or recovery ops class declares
# alike: its TypeId "quench_exp::NAME" under PARENT, its constructors, its name, and Fork, which
# ns-3 calls to give each socket its own copy (BASE: TcpCongestionOps or TcpRecoveryOps).
OPS_CPP = r"""
#ifndef QUENCH_EXP_OPS
#define QUENCH_EXP_OPS(NAME, PARENT, BASE)                                                        \
    static ns3::TypeId GetTypeId()                                                               \
    {                                                                                            \
        static ns3::TypeId tid = ns3::TypeId("quench_exp::" #NAME)                               \
                                     .SetParent<PARENT>()                                        \
                                     .SetGroupName("Internet")                                   \
                                     .AddConstructor<NAME>();                                    \
        return tid;                                                                              \
    }                                                                                            \
    NAME() = default;                                                                            \
    NAME(const NAME&) = default;                                                                 \
    std::string GetName() const override { return #NAME; }                                      \
    ns3::Ptr<ns3::BASE> Fork() override { return ns3::CopyObject<NAME>(this); }
#endif
"""
