/* The workload of bench/harness-cost.sh: a process that does nothing, so
 * that what is timed is the harness around it. */
int main(void)
{
	return 0;
}
